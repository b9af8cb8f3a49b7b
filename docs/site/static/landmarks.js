// The theme's primary sidebar holds the site's title link, the search button and the contents (a
// <nav aria-label="Main">); the first two sit outside any landmark, which axe-core's best-practice rule
// "region" reports on every page at desktop width. The whole sidebar becomes the site's navigation
// landmark, so every piece of it is reachable by landmark (the contents stay a nav inside it).
(() => {
  const mark = () => {
    const sidebar = document.getElementById("pst-primary-sidebar");
    if (sidebar && !sidebar.hasAttribute("role")) {
      sidebar.setAttribute("role", "navigation");
      sidebar.setAttribute("aria-label", "Site");
    }
  };
  if (document.readyState === "loading") document.addEventListener("DOMContentLoaded", mark);
  else mark();
})();
