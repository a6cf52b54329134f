"""The inspector's page in a real browser: Debian's Chromium driven by Selenium (chromium-driver).

The page is opened on the simulated Music app, a view no element claims (the Songs tab) is picked
in the hierarchy, its identifiers are read from the page, and it is added to a copy of the sample
document from the page's form: the file gains the element (comments kept) and the page, told over
its websocket, shows the element grounded. Hovering the hierarchy outlines the view on the
screenshot; acting from the page drives the device and the page follows.

Screenshots of the page are written to ``$TAPIR_ARTIFACTS/inspector`` (else the test's tmp folder)
so a person can look at them. Skipped when Chromium, chromedriver or Selenium are missing
(``.ci/run`` installs them).
"""

from __future__ import annotations

import os
import shutil
from collections.abc import Iterator
from pathlib import Path

import pytest

pytest.importorskip("starlette")
pytest.importorskip("uvicorn")
webdriver = pytest.importorskip("selenium.webdriver")

from selenium.common.exceptions import WebDriverException  # noqa: E402
from selenium.webdriver.common.action_chains import ActionChains  # noqa: E402
from selenium.webdriver.common.by import By  # noqa: E402
from selenium.webdriver.support.ui import WebDriverWait  # noqa: E402

from tapir.inspector.session import InspectorOptions, InspectorSession  # noqa: E402

ROOT = Path(__file__).resolve().parent.parent
MUSIC = ROOT / "samples" / "music" / "music.yaml"

pytestmark = [pytest.mark.adb, pytest.mark.timeout(300)]


def _binaries() -> tuple[str, str]:
    chromium = shutil.which("chromium") or shutil.which("chromium-browser")
    driver = shutil.which("chromedriver")
    if chromium is None or driver is None:
        pytest.skip("Chromium and chromedriver are not installed (apt-get install chromium chromium-driver)")
    return chromium, driver


@pytest.fixture
def browser(tmp_path: Path) -> Iterator[object]:
    chromium, driver = _binaries()
    options = webdriver.ChromeOptions()
    options.binary_location = chromium
    for flag in ("--headless=new", "--no-sandbox", "--disable-gpu", "--disable-dev-shm-usage",
                 "--window-size=1600,1000", "--force-device-scale-factor=1", "--no-first-run",
                 f"--user-data-dir={tmp_path / 'profile'}"):
        options.add_argument(flag)
    try:
        # the Debian driver, never one Selenium Manager would download
        drv = webdriver.Chrome(options=options, service=webdriver.ChromeService(executable_path=driver))
    except WebDriverException as exc:
        pytest.skip(f"Chromium would not start under chromedriver: {exc.msg}")
    try:
        yield drv
    finally:
        drv.quit()


@pytest.fixture
def shots(tmp_path: Path) -> Path:
    base = os.environ.get("TAPIR_ARTIFACTS")
    folder = Path(base) / "inspector" if base else tmp_path / "shots"
    folder.mkdir(parents=True, exist_ok=True)
    return folder


@pytest.fixture
def inspector(tmp_path: Path) -> Iterator[tuple[InspectorSession, Path]]:
    doc = tmp_path / "music.yaml"
    shutil.copy(MUSIC, doc)
    with InspectorSession(InspectorOptions(device="sim:music", document=doc, port=0, interval=0.3)) as session:
        yield session, doc


def _wait(drv: object, what: str, check: object, timeout: float = 20) -> object:
    return WebDriverWait(drv, timeout).until(check, message=what)  # type: ignore[arg-type]


def _row(drv: object, needle: str) -> object:
    for row in drv.find_elements(By.CSS_SELECTOR, "#tree .row"):  # type: ignore[attr-defined]
        if needle in (row.get_attribute("data-search") or ""):
            return row
    return None


def test_pick_a_view_read_its_identifiers_and_add_it_to_the_document(
        browser: object, inspector: tuple[InspectorSession, Path], shots: Path) -> None:
    session, doc = inspector
    drv = browser
    before = doc.read_text(encoding="utf-8")
    drv.get(session.url)  # type: ignore[attr-defined]
    _wait(drv, "the screen name", lambda d: d.find_element(By.ID, "screen-name").text == "songs_screen")
    _wait(drv, "the screenshot", lambda d: d.execute_script(
        "var i = document.getElementById('shot'); return i.complete && i.naturalWidth > 0;"))
    _wait(drv, "the hierarchy", lambda d: _row(d, "tab_songs") is not None)
    # grounded elements are outlined on the screenshot, with how they grounded
    # (each label shows while its element is hovered: read the text either way)
    tags = [t.get_attribute("textContent") for t in drv.find_elements(By.CSS_SELECTOR, "#boxes .box.el .tag")]  # type: ignore[attr-defined]
    assert any(t.startswith("$search_button · identifier 0") for t in tags), tags
    # the whole screen shows, in its proportions, under the boxes (which are placed in percent of it)
    phone, img = drv.execute_script(  # type: ignore[attr-defined]
        "var p = document.getElementById('phone').getBoundingClientRect(),"
        " i = document.getElementById('shot').getBoundingClientRect();"
        "return [[p.width, p.height], [i.width, i.height]];")
    assert abs(phone[1] / phone[0] - 2400 / 1080) < 0.03 and abs(img[1] - phone[1]) <= 3, (phone, img)
    drv.save_screenshot(str(shots / "1-songs-screen.png"))  # type: ignore[attr-defined]

    # hovering a row of the hierarchy outlines the view on the screenshot
    row = _row(drv, "tab_songs")
    ActionChains(drv).move_to_element(row).perform()
    _wait(drv, "the hover box", lambda d: d.find_elements(By.CSS_SELECTOR, "#boxes .box.hover"))
    row.click()  # type: ignore[attr-defined]
    _wait(drv, "the identifiers", lambda d: d.find_elements(By.CSS_SELECTOR, "#identifiers li.ident"))
    idents = drv.find_elements(By.CSS_SELECTOR, "#identifiers li.ident")  # type: ignore[attr-defined]
    first = idents[0].find_element(By.TAG_NAME, "code").text
    assert "tab_songs" in first and "unique" in idents[0].text, idents[0].text
    # no element of songs_screen claims it; the playlists screen's own tab element would (it is not showing)
    claims = drv.find_element(By.ID, "view-claims").text  # type: ignore[attr-defined]
    assert "$songs_screen__" not in claims and "playlists_screen__songs_tab" in claims and "not showing" in claims
    drv.save_screenshot(str(shots / "2-view-picked.png"))  # type: ignore[attr-defined]

    # add it as an element from the page's form
    name = drv.find_element(By.ID, "el-name")  # type: ignore[attr-defined]
    name.clear()
    name.send_keys("songs_tab")
    drv.execute_script("document.getElementById('el-kind').value = 'tab';")  # type: ignore[attr-defined]
    desc = drv.find_element(By.ID, "el-description")  # type: ignore[attr-defined]
    desc.clear()
    desc.send_keys("Switches to the list of songs.")
    checked = [i.get_attribute("value") for i in drv.find_elements(By.CSS_SELECTOR, "#el-identifiers input:checked")]  # type: ignore[attr-defined]
    assert checked and checked[0] == first
    drv.find_element(By.ID, "el-add").click()  # type: ignore[attr-defined]
    _wait(drv, "the edit's result", lambda d: d.find_element(By.ID, "el-result").text.startswith("Added"))

    after = doc.read_text(encoding="utf-8")
    assert "songs_screen__songs_tab:" in after and first in after
    # only lines were added: every line of the file before (comments included) is still there, in order
    kept = iter(after.splitlines())
    assert all(any(line == other for other in kept) for line in before.splitlines())
    # the page reloaded the document: the new element is grounded and listed on the screen
    _wait(drv, "the new element outlined", lambda d: any(
        (t.get_attribute("textContent") or "").startswith("$songs_tab · identifier 0")
        for t in d.find_elements(By.CSS_SELECTOR, "#boxes .box.el .tag")))
    assert session.live is not None
    assert "songs_screen__songs_tab" in [e.name for s in session.live.runtime.document.screens for e in s.elements]
    drv.save_screenshot(str(shots / "3-element-added.png"))  # type: ignore[attr-defined]


def test_acting_from_the_page_drives_the_device_and_the_page_follows(
        browser: object, inspector: tuple[InspectorSession, Path], shots: Path) -> None:
    session, _ = inspector
    drv = browser
    drv.get(session.url)  # type: ignore[attr-defined]
    _wait(drv, "the hierarchy", lambda d: _row(d, "#search") is not None or _row(d, " search ") is not None)
    (_row(drv, " search ") or _row(drv, "#search")).click()  # type: ignore[attr-defined]
    _wait(drv, "the view", lambda d: d.find_element(By.ID, "view").is_displayed())
    drv.find_element(By.CSS_SELECTOR, "[data-view-act='tap']").click()  # type: ignore[attr-defined]
    _wait(drv, "the search screen", lambda d: d.find_element(By.ID, "screen-name").text == "search_screen")
    drv.save_screenshot(str(shots / "4-after-tap.png"))  # type: ignore[attr-defined]
    assert session.live is not None and session.live.state is not None
    assert session.live.state.match.name == "search_screen"
    drv.find_element(By.CSS_SELECTOR, "[data-act='back']").click()  # type: ignore[attr-defined]
    _wait(drv, "back on songs", lambda d: d.find_element(By.ID, "screen-name").text == "songs_screen")


_CLIPPED = """
var out = [];
document.querySelectorAll(arguments[0]).forEach(function (e) {
  if (!e.offsetParent) { return; }  // not shown
  var r = e.getBoundingClientRect();
  for (var p = e.parentElement; p; p = p.parentElement) {
    var s = getComputedStyle(p);
    if (s.overflowX === 'visible' && s.overflow === 'visible') { continue; }
    var q = p.getBoundingClientRect();
    if (r.right > q.left + p.clientWidth + 0.5 || r.left < q.left - 0.5) {
      out.push((e.textContent || e.tagName).trim().slice(0, 30) + ' in ' + (p.id || p.className));
    }
  }
});
return out;
"""


@pytest.mark.parametrize("width", [1400, 1280, 1920])
def test_copy_buttons_and_badges_are_never_clipped(browser: object, inspector: tuple[InspectorSession, Path],
                                                   shots: Path, width: int) -> None:
    session, _ = inspector
    drv = browser
    drv.set_window_size(width, 900)  # type: ignore[attr-defined]
    drv.get(session.url)  # type: ignore[attr-defined]
    _wait(drv, "the hierarchy", lambda d: _row(d, "tab_songs") is not None)
    _row(drv, "tab_songs").click()  # type: ignore[attr-defined]
    _wait(drv, "the identifiers", lambda d: d.find_elements(By.CSS_SELECTOR, "#identifiers li.ident"))
    assert drv.execute_script(_CLIPPED, "#identifiers button, #view-claims button, #view .badge") == []  # type: ignore[attr-defined]
    drv.find_element(By.CSS_SELECTOR, "[data-tab='elements']").click()  # type: ignore[attr-defined]
    _wait(drv, "the elements", lambda d: d.find_elements(By.CSS_SELECTOR, "#elements li"))
    assert drv.execute_script(_CLIPPED, "#elements .badge, #elements .kind") == []  # type: ignore[attr-defined]
    # the heading of the other screens shows only over screens to show
    head_shown, candidates = drv.execute_script(  # type: ignore[attr-defined]
        "return [!document.getElementById('candidates-head').hidden,"
        " document.querySelectorAll('#candidates li').length];")
    assert head_shown == (candidates > 0)
    drv.save_screenshot(str(shots / f"5-elements-at-{width}.png"))  # type: ignore[attr-defined]
