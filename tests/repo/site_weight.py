"""What a first visit to a site page costs a phone reader on a slow connection (issue 54, item 6).

``first_load(browser, url)`` opens the page in a fresh browser context (an empty cache) at 390 x 844
and returns:

- ``bytes``: the bodies of every response until the page is quiet (the load event, then no request
  finished for ``QUIET_MS``), uncompressed as a plain static server (Python's http.server) sends
  them (after the load event only the 243-byte favicon came, measured 2026-12-06; the wait ends
  ``QUIET_MS`` after the later of the load event and the last response, not in whole steps);
- ``load_s``: the load event's time after navigation starts, under Chromium's own throttling through
  the DevTools protocol: simulated 4G (``NETWORK``: 9 Mbit/s down, 85 ms latency) and a CPU four
  times slower (``Emulation.setCPUThrottlingRate``);
- ``requests`` and the three heaviest responses, for the message of a page over its limit;
- ``script``: what the JavaScript function ``script`` returned at the load event, when one is given
  (so a test that reads something on the page need not load it once more).

The time depends on the machine: the CPU slowdown multiplies this machine's speed, so a busy
machine reads slower than a reader's phone would.
"""

from __future__ import annotations

import time

MEGABIT = 1_000_000 / 8  # bytes per second
NETWORK = {"offline": False, "latency": 85, "downloadThroughput": 9 * MEGABIT, "uploadThroughput": 9 * MEGABIT}
CPU_SLOWDOWN = 4
QUIET_MS = 500


def first_load(browser, url: str, script: str | None = None) -> dict:
    """The weight and throttled load time of ``url`` on a first visit (see the module's docstring)."""
    context = browser.new_context(viewport={"width": 390, "height": 844}, device_scale_factor=2, has_touch=True,
                                  is_mobile=True)
    sizes: list[tuple[int, str]] = []
    last = [time.monotonic()]  # when the last response finished
    try:
        tab = context.new_page()
        cdp = context.new_cdp_session(tab)
        cdp.send("Network.enable")
        cdp.send("Network.emulateNetworkConditions", NETWORK)
        cdp.send("Emulation.setCPUThrottlingRate", {"rate": CPU_SLOWDOWN})
        tab.on("requestfinished", lambda req: (sizes.append((req.sizes()["responseBodySize"], req.url)),
                                               last.__setitem__(0, time.monotonic())))
        tab.goto(url, wait_until="load", timeout=120_000)
        load_ms = tab.evaluate("() => performance.getEntriesByType('navigation')[0].loadEventStart")
        found = tab.evaluate(script) if script else None
        last[0] = max(last[0], time.monotonic())  # the quiet time starts at the load event at the earliest
        while (quiet := time.monotonic() - last[0]) * 1000 < QUIET_MS:  # quiet: no request finished for QUIET_MS
            tab.wait_for_timeout(QUIET_MS - quiet * 1000)
    finally:
        context.close()
    heaviest = sorted(sizes, reverse=True)[:3]
    return {"bytes": sum(s for s, _ in sizes), "load_s": load_ms / 1000, "requests": len(sizes), "script": found,
            "heaviest": [f"{url.rsplit('/', 1)[-1].split('?')[0]} {size / 1e6:.2f} MB" for size, url in heaviest]}
