"""The documentation site and an HTML report, opened in headless Chromium as a reader would
open them from disk (``file://``): no console error, every image loaded, no request to
anything but a local file.

Chromium is driven through the Chrome DevTools Protocol over ``--remote-debugging-pipe``
(file descriptors 3 and 4, messages ending in a NUL byte), so the test needs nothing from
PyPI. Playwright is not used: its browsers come from a download server, not from a package
registry. Debian's ``chromium`` is found on ``PATH`` (or named by ``DOCKRECON_CHROMIUM``);
``make chromium`` installs it when it is absent (as root, with apt-get), ``make docs-test``
builds the site, installs Chromium and runs this file. Without Chromium, or without a built
site (``docs/_build/html``), the tests are skipped and say why.

Every request the page makes goes through the Fetch domain: ``file:`` and ``data:`` go on,
anything else is failed before it leaves the machine and recorded. The harness itself is
tested on a page with one fault of each kind, so a check that silently sees nothing fails.
"""
from __future__ import annotations

import json
import os
import select
import shutil
import subprocess
import tempfile
import time
from pathlib import Path

import pytest

ROOT = Path(__file__).resolve().parents[1]
SITE = ROOT / "docs" / "_build" / "html"
REPORT_RESULT = ROOT / "tests" / "reports" / "data" / "reconstruction"

LOCAL_SCHEMES = ("file:", "data:", "blob:", "about:")
# a page is given this long [s] to load, typeset its math and fetch its fonts; one that
# needs longer from local files is itself a fault
PAGE_TIMEOUT = 60.0
# no new request for this long [s] after the load event and the page's promises: settled
QUIET = 0.5


def find_chromium() -> str | None:
    """The Chromium (or Chrome) executable: ``DOCKRECON_CHROMIUM``, else the first of the
    usual names on ``PATH``; None when there is none."""
    named = os.environ.get("DOCKRECON_CHROMIUM")
    if named:
        return named if shutil.which(named) else None
    for name in ("chromium", "chromium-browser", "google-chrome", "google-chrome-stable"):
        path = shutil.which(name)
        if path:
            return path
    return None


class Browser:
    """Headless Chromium on a DevTools pipe, one page, the faults of each page load recorded.

    Parameters
    ----------
    executable : str
        Path of the Chromium executable.
    """

    def __init__(self, executable: str):
        self._profile = tempfile.mkdtemp(prefix="dockrecon-chromium-")
        # the pipe ends Chromium reads (fd 3) and writes (fd 4); moved above 9 first, so
        # that placing them at 3 and 4 in the child cannot overwrite one with the other
        to_child_r, to_child_w = os.pipe()
        from_child_r, from_child_w = os.pipe()
        child_in = _high_fd(to_child_r)
        child_out = _high_fd(from_child_w)
        for fd in (to_child_r, from_child_w):
            os.close(fd)

        def place_pipe() -> None:
            os.dup2(child_in, 3)
            os.dup2(child_out, 4)

        args = [executable, "--headless", "--remote-debugging-pipe",
                f"--user-data-dir={self._profile}", "--disable-gpu", "--no-first-run",
                "--no-default-browser-check", "--disable-background-networking",
                "--disable-component-update", "--disable-sync", "--disable-default-apps",
                "--disable-extensions", "--disable-quic", "--mute-audio",
                "--window-size=1200,900", "about:blank"]
        if os.geteuid() == 0:   # Chromium refuses to run its sandbox as root
            args.insert(1, "--no-sandbox")
        # Chromium's own log goes to a file: a pipe nobody reads would fill and stall it
        self._log = open(Path(self._profile) / "chromium.log", "w+b")
        self._proc = subprocess.Popen(args, stdin=subprocess.DEVNULL,
                                      stdout=self._log, stderr=self._log,
                                      pass_fds=(3, 4), preexec_fn=place_pipe)
        os.close(child_in)
        os.close(child_out)
        self._write = os.fdopen(to_child_w, "wb", buffering=0)
        self._read = os.fdopen(from_child_r, "rb", buffering=0)
        self._buffer = b""
        self._next_id = 0
        self.errors: list[str] = []
        self.external: list[str] = []
        self.requests: list[str] = []
        self._loaded = False
        self.session = self._attach()

    # -- protocol ---------------------------------------------------------------------------
    def _send(self, method: str, params: dict | None = None, session: str | None = None) -> int:
        self._next_id += 1
        msg = {"id": self._next_id, "method": method, "params": params or {}}
        if session:
            msg["sessionId"] = session
        self._write.write(json.dumps(msg).encode() + b"\0")
        return self._next_id

    def _receive(self) -> dict:
        while b"\0" not in self._buffer:
            ready, _, _ = select.select([self._read], [], [], PAGE_TIMEOUT)
            chunk = self._read.read(1 << 16) if ready else None
            if not chunk:
                self._log.seek(0)
                log = self._log.read().decode(errors="replace")[-2000:]
                what = "closed the DevTools pipe" if ready else \
                    f"sent nothing for {PAGE_TIMEOUT} s"
                raise RuntimeError(f"Chromium {what}; its log ends: {log}")
            self._buffer += chunk
        raw, self._buffer = self._buffer.split(b"\0", 1)
        return json.loads(raw)

    def call(self, method: str, params: dict | None = None, *, session: str | None = "page"
             ) -> dict:
        """Send one command and return its result; events that arrive meanwhile are handled."""
        sid = self.session if session == "page" else session
        wanted = self._send(method, params, sid)
        while True:
            msg = self._receive()
            if msg.get("id") == wanted:
                if "error" in msg:
                    raise RuntimeError(f"{method}: {msg['error']}")
                return msg.get("result", {})
            if "method" in msg:
                self._handle(msg)

    def _pump(self, seconds: float) -> None:
        """Handle the events that arrive within ``seconds`` [s] (a command to the browser,
        not the page, is the clock: its reply ends each wait, even mid-navigation)."""
        end = time.monotonic() + seconds
        while time.monotonic() < end:
            self.call("Browser.getVersion", session=None)
            time.sleep(0.05)

    def _attach(self) -> str:
        targets = self.call("Target.getTargets", session=None)["targetInfos"]
        page = next(t for t in targets if t["type"] == "page")
        sid = self.call("Target.attachToTarget", {"targetId": page["targetId"],
                                                  "flatten": True}, session=None)["sessionId"]
        for domain in ("Runtime", "Log", "Page", "Network"):
            self.call(f"{domain}.enable", session=sid)
        # every request pauses here first (see _handle)
        self.call("Fetch.enable", {"patterns": [{"urlPattern": "*"}]}, session=sid)
        return sid

    # -- faults -----------------------------------------------------------------------------
    def _handle(self, msg: dict) -> None:
        method, params = msg["method"], msg.get("params", {})
        if method == "Fetch.requestPaused":
            url = params["request"]["url"]
            if url.startswith(LOCAL_SCHEMES):
                self._send("Fetch.continueRequest", {"requestId": params["requestId"]},
                           self.session)
            else:
                self._external(url)
                self._send("Fetch.failRequest", {"requestId": params["requestId"],
                                                 "errorReason": "BlockedByClient"},
                           self.session)
        elif method == "Network.requestWillBeSent":
            url = params["request"]["url"]
            self.requests.append(url)
            if not url.startswith(LOCAL_SCHEMES):
                self._external(url)
        elif method == "Runtime.consoleAPICalled" and params["type"] in ("error", "assert"):
            text = " ".join(str(a.get("value", a.get("description", ""))) for a in params["args"])
            self.errors.append(f"console.{params['type']}: {text}")
        elif method == "Runtime.exceptionThrown":
            d = params["exceptionDetails"]
            self.errors.append("uncaught: " + d.get("exception", {}).get("description",
                                                                          d.get("text", "")))
        elif method == "Log.entryAdded" and params["entry"]["level"] == "error":
            e = params["entry"]
            self.errors.append(f"{e['source']}: {e['text']} {e.get('url', '')}".strip())
        elif method == "Network.loadingFailed" and not params.get("canceled"):
            if params.get("blockedReason") != "inspector" and \
                    params.get("errorText") != "net::ERR_BLOCKED_BY_CLIENT":
                self.errors.append(f"failed load: {params.get('errorText')}")
        elif method == "Page.loadEventFired":
            self._loaded = True

    def _external(self, url: str) -> None:
        # seen by both Fetch and Network, in either order
        if url not in self.external:
            self.external.append(url)

    def open(self, url: str) -> dict:
        """Load ``url``, wait until it has settled, and return what went wrong.

        Returns
        -------
        dict
            ``errors`` (console errors, uncaught exceptions, failed loads), ``external``
            (URLs of requests to anything but a local file, all blocked), ``images`` (the
            number of ``<img>`` elements), ``broken_images`` (the ``src`` of each that did
            not load, ``naturalWidth`` 0), ``requests`` (every URL requested), ``math`` (the
            number of formulas MathJax typeset).
        """
        self.errors: list[str] = []
        self.external: list[str] = []
        self.requests: list[str] = []
        self._loaded = False
        self.call("Page.navigate", {"url": url})
        end = time.monotonic() + PAGE_TIMEOUT
        while not self._loaded:
            if time.monotonic() > end:
                raise TimeoutError(f"{url} did not finish loading in {PAGE_TIMEOUT} s")
            self._pump(0.1)
        # images below the fold load lazily: load them all; then MathJax, then web fonts
        self.evaluate("""Promise.all(Array.from(document.images).map(
                           i => { i.loading = 'eager'; return i.decode().catch(() => null); }))
                      .then(() => window.MathJax && MathJax.startup && MathJax.startup.promise)
                      .then(() => document.fonts.ready).then(() => true)""")
        seen = -1
        while seen != len(self.requests) and time.monotonic() < end:
            seen = len(self.requests)
            self._pump(QUIET)
        return {
            "errors": list(self.errors), "external": list(self.external),
            "requests": list(self.requests),
            "images": self.evaluate("document.images.length"),
            "broken_images": self.evaluate(
                "Array.from(document.images).filter(i => !(i.complete && i.naturalWidth > 0))"
                ".map(i => i.currentSrc || i.src || i.outerHTML)"),
            "math": self.evaluate("document.querySelectorAll('mjx-container').length"),
        }

    def evaluate(self, expression: str):
        """The value of a JavaScript expression in the page (promises awaited)."""
        r = self.call("Runtime.evaluate", {"expression": expression, "awaitPromise": True,
                                           "returnByValue": True})
        if "exceptionDetails" in r:
            raise RuntimeError(f"{expression!r}: {r['exceptionDetails']}")
        return r["result"].get("value")

    def close(self) -> None:
        try:
            self._send("Browser.close")
            self._proc.wait(timeout=10)
        except Exception:
            self._proc.kill()
            self._proc.wait()
        for f in (self._write, self._read, self._log):
            f.close()
        shutil.rmtree(self._profile, ignore_errors=True)


def _high_fd(fd: int) -> int:
    import fcntl

    return fcntl.fcntl(fd, fcntl.F_DUPFD, 10)


@pytest.fixture(scope="module")
def browser():
    exe = find_chromium()
    if exe is None:
        named = os.environ.get("DOCKRECON_CHROMIUM")
        where = f"DOCKRECON_CHROMIUM={named!r} is not an executable" if named else \
            "none of chromium, chromium-browser, google-chrome on PATH"
        pytest.skip(f"no Chromium ({where}): `make chromium` installs Debian's (as root), "
                    "`make docs-test` builds the site, installs it and runs these tests")
    b = Browser(exe)
    yield b
    b.close()


def _faults(page: dict) -> list[str]:
    return ([f"console/load error: {e}" for e in page["errors"]]
            + [f"external request: {u}" for u in page["external"]]
            + [f"image not loaded: {s}" for s in page["broken_images"]])


def test_the_harness_sees_each_kind_of_fault(browser, tmp_path):
    """A page with a console error, a missing image and a script from another host: each is
    reported (the script is blocked before it leaves the machine), a good image is not."""
    import matplotlib.pyplot as plt
    import numpy as np

    plt.imsave(tmp_path / "good.png", np.zeros((4, 4, 3)))
    page = tmp_path / "faulty.html"
    page.write_text("<!DOCTYPE html><html><head><title>t</title>"
                    "<script src='https://example.invalid/lib.js'></script></head><body>"
                    "<img src='good.png'><img src='missing.png'>"
                    "<script>console.error('deliberate')</script></body></html>")
    r = browser.open(page.as_uri())
    assert r["external"] == ["https://example.invalid/lib.js"], r
    assert any("deliberate" in e for e in r["errors"]), r
    assert r["images"] == 2 and len(r["broken_images"]) == 1 and \
        r["broken_images"][0].endswith("missing.png"), r
    assert any(u.endswith("good.png") for u in r["requests"]), r


def test_a_reconstruction_report_loads_whole_and_offline(browser, tmp_path):
    """The HTML report of the stored short reconstruction (tests/reports/data): figures are
    inline ``data:`` images, no script or style from elsewhere."""
    from reports.build import rebuild_report

    run = tmp_path / "run"
    shutil.copytree(REPORT_RESULT, run)
    (html,) = rebuild_report(run, ("html",))
    r = browser.open(html.as_uri())
    assert not _faults(r), _faults(r)
    # the report has a dozen figures (test_builders.py checks each by name)
    assert r["images"] >= 10, r["images"]


SITE_PAGES = {
    # page: (least <img> count, least typeset formulas)
    "index.html": (0, 0),
    "auto_examples/index.html": (6, 0),                 # the gallery's thumbnails
    "auto_examples/plot_simulate_docking.html": (1, 0),
    "auto_examples/plot_reconstruct_nominal.html": (0, 0),
    "auto_examples/plot_campaign.html": (1, 0),
    "theory/contact.html": (0, 20),                     # MathJax from _static
    "api/generated/models.contact.force.html": (0, 1),
}


@pytest.mark.parametrize("page", list(SITE_PAGES))
def test_a_page_of_the_docs_site_loads_whole_and_offline(browser, page):
    if not (SITE / "index.html").is_file():
        pytest.skip(f"the docs are not built ({SITE / 'index.html'} absent): `make docs` "
                    "builds them, `make docs-test` builds them and runs these tests")
    path = SITE / page
    assert path.is_file(), f"{page} is not in the built site: a page was renamed or dropped?"
    r = browser.open(path.as_uri())
    assert not _faults(r), _faults(r)
    least_images, least_math = SITE_PAGES[page]
    assert r["images"] >= least_images, r["images"]
    assert r["math"] >= least_math, f"{r['math']} formulas typeset by MathJax"
