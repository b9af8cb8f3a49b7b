/* tl-minimal site: the site-menu and page-contents buttons work on every page, at every width.
   Each page has two .primary-toggle buttons (one in the top bar, hidden at every width this site
   uses, one in the article's header) and two .secondary-toggle buttons; the theme's script binds the
   first of each only (pydata-sphinx-theme #2451, sphinx-book-theme #988), so the visible ones showed a
   tooltip and nothing else. A click (tap, Enter or Space) on any other toggle is passed on to the
   bound one: on a phone it opens the theme's drawer (a modal <dialog>: focus moves into it, Escape or
   a tap beside it closes it and focus goes back to the button), on a wide screen the site menu hides
   and shows. Each toggle says whether its drawer is open (aria-expanded); each drawer gets a Close
   button, for a reader who neither presses Escape nor thinks of tapping beside it. */
(() => {
  const PAIRS = [[".primary-toggle", "pst-primary-sidebar-modal", "pst-primary-sidebar"],
                 [".secondary-toggle", "pst-secondary-sidebar-modal", "pst-secondary-sidebar"]];

  const closeButton = (dialog) => {
    const button = document.createElement("button");
    button.type = "button";
    button.className = "tl-drawer-close btn";
    button.textContent = "Close";
    button.addEventListener("click", () => dialog.close());
    return button;
  };

  const expanded = (toggles, dialog, sidebar) => {
    const open = dialog.open || (!window.matchMedia("(max-width: 991.98px)").matches
                                 && !sidebar.classList.contains("pst-sidebar-hidden")
                                 && sidebar.offsetWidth > 0);
    toggles.forEach((t) => t.setAttribute("aria-expanded", String(open)));
  };

  const bind = () => {
    for (const [selector, dialogId, sidebarId] of PAIRS) {
      const toggles = [...document.querySelectorAll(selector)];
      const dialog = document.getElementById(dialogId);
      const sidebar = document.getElementById(sidebarId);
      if (toggles.length < 2 || !dialog || !sidebar || toggles[0].dataset.tlBound) continue;
      const bound = toggles[0];  // the one the theme listens to
      bound.dataset.tlBound = "1";
      toggles.forEach((t) => t.setAttribute("aria-controls", sidebarId));
      toggles.slice(1).forEach((toggle) => {
        toggle.addEventListener("click", (event) => {
          event.preventDefault();
          toggle.focus();  // (a tap on some browsers does not focus): where focus returns on close
          bound.click();
          expanded(toggles, dialog, sidebar);
          const tip = window.bootstrap && bootstrap.Tooltip && bootstrap.Tooltip.getInstance(toggle);
          if (tip) tip.hide();
        });
      });
      if (!dialog.querySelector(".tl-drawer-close")) dialog.prepend(closeButton(dialog));
      // the theme moves the sidebar's content into the dialog and back: keep Close out of the sidebar
      const observer = new MutationObserver(() => {
        const stray = sidebar.querySelector(".tl-drawer-close");
        if (stray) dialog.prepend(stray);
      });
      observer.observe(sidebar, {childList: true});
      dialog.addEventListener("close", () => expanded(toggles, dialog, sidebar));
      expanded(toggles, dialog, sidebar);
    }
  };
  if (document.readyState === "loading") document.addEventListener("DOMContentLoaded", bind);
  else bind();
})();
