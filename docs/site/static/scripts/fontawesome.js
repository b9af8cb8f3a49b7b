/* tl-minimal site: this file replaces the theme's fontawesome.js (1.56 MB of every page's 2.6 MB; issue
   54, item 6). That script turns the icons into SVG; the theme's stylesheet draws the same icons from
   Font Awesome's web font (115 KB, fetched only for a page that shows one), so without it every icon
   still shows. The site's static folder is copied after the theme's, so this stub is served instead. */
