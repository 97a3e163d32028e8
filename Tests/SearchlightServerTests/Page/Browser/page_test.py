#!/usr/bin/env python3
"""The search page in a real browser (Debian's chromium and chromium-driver, through Selenium).

Run by BrowserTests.swift against a server it started on a fixture (see there); prints one line a
check and exits 1 if any failed. Every wait is a readiness condition with a timeout, never a sleep.
"""
import argparse
import json
import os
import sys
import time
import traceback
import urllib.parse

from selenium import webdriver
from selenium.common.exceptions import TimeoutException
from selenium.webdriver.chrome.options import Options
from selenium.webdriver.chrome.service import Service
from selenium.webdriver.common.by import By
from selenium.webdriver.common.keys import Keys
from selenium.webdriver.support.ui import WebDriverWait

parser = argparse.ArgumentParser()
parser.add_argument("--url", required=True)
parser.add_argument("--screenshots", required=True)
parser.add_argument("--chromium", default="/usr/bin/chromium")
parser.add_argument("--driver", default="/usr/bin/chromedriver")
args = parser.parse_args()
BASE = args.url.rstrip("/")
TIMEOUT = 20
failures = []


def browser(javascript=True):
    options = Options()
    options.binary_location = args.chromium
    for flag in ("--headless=new", "--no-sandbox", "--disable-dev-shm-usage", "--disable-gpu",
                 "--window-size=1200,900", "--lang=en-US", "--force-device-scale-factor=1"):
        options.add_argument(flag)
    if not javascript:
        options.add_experimental_option("prefs", {"profile.managed_default_content_settings.javascript": 2})
    driver = webdriver.Chrome(service=Service(args.driver), options=options)
    driver.set_page_load_timeout(TIMEOUT)
    driver.set_script_timeout(TIMEOUT)
    return driver


def wait(driver, condition, what):
    try:
        return WebDriverWait(driver, TIMEOUT, poll_frequency=0.05).until(lambda d: condition(d))
    except TimeoutException:
        raise AssertionError("timed out waiting for " + what)


def check(name):
    def run(function):
        started = time.monotonic()
        try:
            function()
            print(f"ok   {name} ({time.monotonic() - started:.1f} s)", flush=True)
        except Exception as error:  # one failed check does not hide the others
            failures.append(name)
            print(f"FAIL {name}: {error}", flush=True)
            traceback.print_exc()
        return function
    return run


def status(driver):
    """The status line without its time ("… (12 ms)")."""
    text = driver.find_element(By.ID, "status").text
    return text[:text.rindex(" (")] if text.endswith(" ms)") else text


def shown_query(driver):
    return urllib.parse.parse_qs(urllib.parse.urlparse(driver.current_url).query)


def ready(driver):
    wait(driver, lambda d: d.find_element(By.ID, "searchlight").get_attribute("data-ready") == "true", "the page's script")
    driver.execute_script("performance.setResourceTimingBufferSize(100000)")


def searches(driver):
    """The q of every /v1/search the page sent, in order (the browser's resource timing)."""
    urls = driver.execute_script(
        "return performance.getEntriesByType('resource').map(e => e.name).filter(n => n.includes('/v1/search'))")
    return [urllib.parse.parse_qs(urllib.parse.urlparse(u).query).get("q", [""])[0] for u in urls]


def type_and_wait(driver, text, expected_status):
    box = driver.find_element(By.ID, "q")
    box.clear()
    box.send_keys(text)
    wait(driver, lambda d: expected_status in status(d), f"status with {expected_status!r} (now {status(driver)!r})")


js = browser()
try:
    @check("typing shows ranked hits with highlights, announced in a live region, the query in the URL")
    def typing():
        js.get(BASE + "/")
        ready(js)
        assert js.switch_to.active_element.get_attribute("id") == "q", "the search box has focus"
        label = js.find_element(By.CSS_SELECTOR, "label[for=q]")
        assert label.text, "the search box has a label"
        type_and_wait(js, "kernel", "results for “kernel”")
        hits = js.find_elements(By.CSS_SELECTOR, "#hits .hit")
        assert len(hits) == 20, f"a page of 20 hits, got {len(hits)}"
        marks = js.find_elements(By.CSS_SELECTOR, "#hits .hit mark")
        assert marks and all(m.text.lower().startswith("kernel") for m in marks), [m.text for m in marks][:5]
        live = js.find_element(By.ID, "status")
        assert live.get_attribute("role") == "status" and live.get_attribute("aria-live") == "polite"
        assert shown_query(js).get("q") == ["kernel"], js.current_url
        assert js.title.startswith("kernel"), js.title
        js.save_screenshot(os.path.join(args.screenshots, "search-page.png"))

    @check("the last word is searched as a prefix while typing")
    def prefix():
        type_and_wait(js, "kern", "results for “kern”")
        assert js.find_elements(By.CSS_SELECTOR, "#hits .hit mark"), "kern… matches kernel"

    @check("a stale answer never overwrites a newer one")
    def stale():
        # The answer for "stale" is held back until after the answer for "stalest" is drawn.
        js.execute_script("""
            const real = window.fetch;
            window.__released = false;
            window.__sent = [];
            window.fetch = function (url, options) {
              const q = new URL(url, location.href).searchParams.get('q');
              if (String(url).includes('/v1/search')) window.__sent.push(q);
              // The held request ignores the page's abort: an answer already on its way
              // (aborted too late) must still not be drawn.
              const held = String(url).includes('/v1/search') && q === 'stale';
              const answer = real.call(this, url, held ? Object.assign({}, options, { signal: undefined }) : options);
              if (held) {
                return new Promise((resolve, reject) => {
                  const poll = () => window.__released ? answer.then(resolve, reject) : setTimeout(poll, 20);
                  poll();
                });
              }
              return answer;
            };""")
        box = js.find_element(By.ID, "q")
        box.clear()
        box.send_keys("stale")
        wait(js, lambda d: "stale" in d.execute_script("return window.__sent"), "the search for 'stale' to be sent")
        box.send_keys("st")
        wait(js, lambda d: "results for “stalest”" in status(d), "the newer answer")
        answered = int(js.find_element(By.ID, "searchlight").get_attribute("data-answered"))
        js.execute_script("window.__released = true;")
        # The page counts the answers it has handled (drawn, or dropped as stale).
        wait(js, lambda d: int(d.find_element(By.ID, "searchlight").get_attribute("data-answered")) > answered, "the held answer to be handled")
        assert "results for “stalest”" in status(js), status(js)
        titles = [h.text for h in js.find_elements(By.CSS_SELECTOR, "#hits .hit h3")]
        assert titles and "stalest" in titles[0].lower(), titles
        js.execute_script("window.location.reload()")
        ready(js)

    @check("a hostile document shows as text: no script runs, no element is injected")
    def hostile():
        js.get(BASE + "/")
        ready(js)
        type_and_wait(js, "hostile", "for “hostile”")
        hit = js.find_element(By.CSS_SELECTOR, "#hits .hit")
        assert hit.find_element(By.TAG_NAME, "h3").text == "<script>window.__pwned=1</script> hostile", hit.text
        type_and_wait(js, "onerror", "for “onerror”")
        snippet = js.find_element(By.CSS_SELECTOR, "#hits .hit .snippet").text
        assert '<img src=x onerror="window.__pwned=2"> hostile text & more' == snippet, snippet
        assert not js.find_elements(By.CSS_SELECTOR, "#hits script, #hits img, #hits iframe")
        assert js.execute_script("return window.__pwned === undefined"), "the document's script ran"
        js.get(BASE + "/?q=hostile")  # the server-rendered page, then the script's redraw
        ready(js)
        wait(js, lambda d: "for “hostile”" in status(d), "the hostile search")
        assert js.execute_script("return window.__pwned === undefined"), "the document's script ran"
        assert not js.find_elements(By.CSS_SELECTOR, "#hits script, #hits img")

    @check("a facet is a filter: click it, back and forward")
    def facets():
        js.get(BASE + "/")
        ready(js)
        type_and_wait(js, "kernel", "results for “kernel”")
        total = status(js)
        link = wait(js, lambda d: [a for a in d.find_elements(By.CSS_SELECTOR, "#facets a") if a.text.startswith("network")],
                    "the network facet")[0]
        link.click()
        wait(js, lambda d: "filter" in shown_query(d), "the filter in the URL")
        wait(js, lambda d: status(d) != total and "results for “kernel”" in status(d), "the filtered results")
        chips = js.find_elements(By.CSS_SELECTOR, "#chips li")
        assert len(chips) == 1 and "network" in chips[0].text, [c.text for c in chips]
        metas = [h.text for h in js.find_elements(By.CSS_SELECTOR, "#hits .hit .meta")]
        assert metas and all(int(m.split(" · ")[-1]) % 3 == 1 for m in metas), metas  # the network notes
        assert "10 results" in status(js), status(js)
        js.save_screenshot(os.path.join(args.screenshots, "search-page-facet.png"))
        js.back()
        wait(js, lambda d: "filter" not in shown_query(d) and status(d) == total, "back to the unfiltered search")
        assert not js.find_elements(By.CSS_SELECTOR, "#chips li")
        assert js.find_element(By.ID, "q").get_attribute("value") == "kernel"
        js.forward()
        wait(js, lambda d: "filter" in shown_query(d) and "10 results" in status(d), "forward to the filtered search")

    @check("back and forward between two queries")
    def history():
        js.get(BASE + "/")
        ready(js)
        type_and_wait(js, "kernel", "results for “kernel”")
        type_and_wait(js, "storage", "results for “storage”")
        js.back()
        wait(js, lambda d: "results for “kernel”" in status(d), "back to kernel")
        assert js.find_element(By.ID, "q").get_attribute("value") == "kernel"
        js.forward()
        wait(js, lambda d: "results for “storage”" in status(d), "forward to storage")

    @check("totals past the counting bound read 10,000+")
    def bound():
        type_and_wait(js, "common", "for “common”")
        assert status(js).startswith("10,000+ results"), status(js)

    @check("keyboard: suggestions with arrows and Enter, results with arrows, Escape back to the box")
    def keyboard():
        js.get(BASE + "/")
        ready(js)
        box = js.find_element(By.ID, "q")
        box.send_keys("netw")
        wait(js, lambda d: d.find_element(By.ID, "suggestions").is_displayed(), "suggestions")
        assert box.get_attribute("aria-expanded") == "true"
        box.send_keys(Keys.ARROW_DOWN)
        active = box.get_attribute("aria-activedescendant")
        assert active == "suggestion-0", active
        chosen = js.find_element(By.ID, active).text
        box.send_keys(Keys.ENTER)
        wait(js, lambda d: f"for “{chosen}”" in status(d), "the chosen suggestion's results")
        assert box.get_attribute("value") == chosen and box.get_attribute("aria-expanded") == "false"
        box.send_keys(Keys.ARROW_DOWN)
        assert "hit" in js.switch_to.active_element.get_attribute("class"), "ArrowDown moves to the first hit"
        first = js.switch_to.active_element.text
        js.switch_to.active_element.send_keys(Keys.ARROW_DOWN)
        assert js.switch_to.active_element.text != first, "ArrowDown moves to the next hit"
        js.switch_to.active_element.send_keys(Keys.ESCAPE)
        assert js.switch_to.active_element.get_attribute("id") == "q", "Escape returns to the box"
        js.find_element(By.TAG_NAME, "body").click()
        js.find_element(By.TAG_NAME, "body").send_keys("/")
        assert js.switch_to.active_element.get_attribute("id") == "q", "/ focuses the box"

    @check("more results: the next page by cursor, appended")
    def more():
        type_and_wait(js, "kernel", "results for “kernel”")
        link = js.find_element(By.ID, "more")
        assert link.is_displayed()
        link.click()
        wait(js, lambda d: len(d.find_elements(By.CSS_SELECTOR, "#hits .hit")) == 30, "all 30 hits")
        ids = [h.find_element(By.CSS_SELECTOR, ".meta").text for h in js.find_elements(By.CSS_SELECTOR, "#hits .hit")]
        assert len(set(ids)) == 30, "no hit twice"
        assert not js.find_element(By.ID, "more").is_displayed(), "no more after the last page"

    def compose(box, steps, committed):
        """Composes `steps` as an input method shows them, then commits `committed`: no search
        is sent before the commit, then exactly one, for the committed word, which finds it."""
        box.clear()
        box.click()
        before = len(searches(js))
        for text in steps:
            js.execute_cdp_cmd("Input.imeSetComposition", {"text": text, "selectionStart": len(text), "selectionEnd": len(text)})
            wait(js, lambda d: box.get_attribute("value") == text, f"the composition {text!r}")
        # Longer than the debounce: a search would have been sent by now.
        js.execute_script("return new Promise(r => setTimeout(r, 600))")
        assert len(searches(js)) == before, f"searches sent while composing: {searches(js)[before:]}"
        js.execute_cdp_cmd("Input.insertText", {"text": committed})
        wait(js, lambda d: f"for “{committed}”" in status(d), f"the composed word's results (now {status(js)!r})")
        sent = searches(js)[before:]
        assert sent == [committed], sent
        assert committed in js.find_element(By.CSS_SELECTOR, "#hits .hit").text

    @check("Chinese and Japanese through an input method: no search on half-composed text")
    def composition():
        js.get(BASE + "/")
        ready(js)
        box = js.find_element(By.ID, "q")
        compose(box, ("s", "sh", "shu", "shuju", "数据"), "数据库")  # pinyin, then candidates
        js.save_screenshot(os.path.join(args.screenshots, "search-page-cjk.png"))
        compose(box, ("k", "ke", "けんさ", "検査", "検索"), "検索")  # romaji, kana, then kanji

    @check("a bad filter in the URL says where, as one line, and the page still works")
    def bad_filter():
        js.get(BASE + "/?q=kernel&filter=" + urllib.parse.quote("category = 'x"))
        ready(js)
        notice = wait(js, lambda d: d.find_element(By.ID, "notice").is_displayed() and d.find_element(By.ID, "notice"), "the notice")
        assert "invalid filter" in notice.text and "\n" not in notice.text, notice.text
        assert notice.get_attribute("role") == "alert"
finally:
    js.quit()

nojs = browser(javascript=False)
try:
    @check("without JavaScript: the form, server-rendered results, facet links and the next page")
    def no_javascript():
        nojs.get(BASE + "/")
        box = nojs.find_element(By.ID, "q")
        box.send_keys("kernel")
        box.send_keys(Keys.ENTER)
        wait(nojs, lambda d: "results for “kernel”" in status(d), "the server-rendered results")
        assert shown_query(nojs).get("q") == ["kernel"]
        hits = nojs.find_elements(By.CSS_SELECTOR, "#hits .hit")
        assert len(hits) == 20, f"{len(hits)} hits: {nojs.page_source[:3000]}"
        assert nojs.find_elements(By.CSS_SELECTOR, "#hits .hit mark")
        assert nojs.find_element(By.ID, "searchlight").get_attribute("data-ready") is None, "the script did not run"
        [a for a in nojs.find_elements(By.CSS_SELECTOR, "#facets a") if a.text.startswith("network")][0].click()
        wait(nojs, lambda d: "10 results" in status(d), "the filtered page")
        assert "filter" in shown_query(nojs)
        nojs.back()
        wait(nojs, lambda d: "filter" not in shown_query(d), "back")
        nojs.find_element(By.ID, "more").click()
        wait(nojs, lambda d: "cursor" in shown_query(d), "the next page")
        assert len(nojs.find_elements(By.CSS_SELECTOR, "#hits .hit")) == 10, "the last 10 of 30"
        nojs.get(BASE + "/?q=hostile")
        assert "<script>" in nojs.find_element(By.CSS_SELECTOR, "#hits .hit").text
        assert not nojs.find_elements(By.CSS_SELECTOR, "#hits script, #hits img")
        nojs.get(BASE + "/?q=kernal")
        assert "kernel" in nojs.find_element(By.ID, "explanation").text or "results" in status(nojs)
finally:
    nojs.quit()

print(json.dumps({"failed": failures}))
sys.exit(1 if failures else 0)
