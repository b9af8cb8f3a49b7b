"""What a first visit to a site page costs a phone reader on a slow connection (issue 54, item 6).

``first_load(browser, url)`` opens the page in a fresh browser context (an empty cache) at 390 x 844
and returns:

- ``bytes``: the bodies of every response until the page is quiet (the load event, then no request
  for ``QUIET_MS``), uncompressed as a plain static server (Python's http.server) sends them;
- ``load_s``: the load event's time after navigation starts, under Chromium's own throttling through
  the DevTools protocol: simulated 4G (``NETWORK``: 9 Mbit/s down, 85 ms latency) and a CPU four
  times slower (``Emulation.setCPUThrottlingRate``);
- ``requests`` and the three heaviest responses, for the message of a page over its limit.

The time depends on the machine: the CPU slowdown multiplies this machine's speed, so a busy
machine reads slower than a reader's phone would.
"""

from __future__ import annotations

MEGABIT = 1_000_000 / 8  # bytes per second
NETWORK = {"offline": False, "latency": 85, "downloadThroughput": 9 * MEGABIT, "uploadThroughput": 9 * MEGABIT}
CPU_SLOWDOWN = 4
QUIET_MS = 500


def first_load(browser, url: str) -> dict:
    """The weight and throttled load time of ``url`` on a first visit (see the module's docstring)."""
    context = browser.new_context(viewport={"width": 390, "height": 844}, device_scale_factor=2, has_touch=True,
                                  is_mobile=True)
    sizes: list[tuple[int, str]] = []
    try:
        tab = context.new_page()
        cdp = context.new_cdp_session(tab)
        cdp.send("Network.enable")
        cdp.send("Network.emulateNetworkConditions", NETWORK)
        cdp.send("Emulation.setCPUThrottlingRate", {"rate": CPU_SLOWDOWN})
        tab.on("requestfinished", lambda req: sizes.append((req.sizes()["responseBodySize"], req.url)))
        tab.goto(url, wait_until="load", timeout=120_000)
        load_ms = tab.evaluate("() => performance.getEntriesByType('navigation')[0].loadEventStart")
        seen = -1
        while seen != len(sizes):  # quiet: no request finished for QUIET_MS
            seen = len(sizes)
            tab.wait_for_timeout(QUIET_MS)
    finally:
        context.close()
    heaviest = sorted(sizes, reverse=True)[:3]
    return {"bytes": sum(s for s, _ in sizes), "load_s": load_ms / 1000, "requests": len(sizes),
            "heaviest": [f"{url.rsplit('/', 1)[-1].split('?')[0]} {size / 1e6:.2f} MB" for size, url in heaviest]}
