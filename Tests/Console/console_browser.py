#!/usr/bin/env python3
"""Trellis's console in Debian's headless Chromium: loads each page at a phone width (390x844, as a
mobile device) and a desktop width (1280x800), reads what each page shows from the DOM and compares
it with --expect (what the test put in the store), checks that the page does not scroll sideways,
saves a screenshot per page and width into --out (console-<page>-<width>.png, each path printed),
and fails on any error in the browser's console (a CSP violation, a failed load, a script error).

Prints one JSON line per event: page (what was read), screenshot (path), mismatch, console, end.
Exits 0 when everything matched, 1 otherwise. Needs Tests/SocketIO/browser/setup.sh to have run
(Chromium, ChromeDriver and the Selenium venv); started with another python3, it re-runs itself
with the venv's.

  python3 Tests/Console/console_browser.py --url http://127.0.0.1:9470 --expect expect.json --out DIR
"""
import argparse
import json
import os
import sys

HERE = os.path.dirname(os.path.abspath(__file__))
BROWSER = os.path.join(os.path.dirname(HERE), "SocketIO", "browser")
sys.path.insert(0, BROWSER)
from browser_venv import require_selenium  # noqa: E402

require_selenium(__file__, "console_browser")
from selenium.webdriver.common.by import By  # noqa: E402
from selenium.webdriver.common.keys import Keys  # noqa: E402

from p2o_browser import start_chromium  # noqa: E402  (the same locked-down Chromium)

WIDTHS = {"phone": (390, 844, True), "desktop": (1280, 800, False)}
problems = []


def say(event):
    sys.stdout.write(json.dumps(event, ensure_ascii=False) + "\n")
    sys.stdout.flush()


def check(what, seen, expected):
    if seen != expected:
        problems.append(what)
        say({"event": "mismatch", "what": what, "seen": seen, "expected": expected})


def texts(driver, selector):
    return [element.text.strip() for element in driver.find_elements(By.CSS_SELECTOR, selector)]


def read(driver, name, expect):
    """What the page `name` shows, checked against `expect`."""
    h1 = texts(driver, "main h1")
    seen = {"h1": h1, "nav": texts(driver, "nav[aria-label='Console pages'] a"),
            "current": texts(driver, "nav a[aria-current='page']")}
    check(f"{name}: one h1", len(h1), 1)
    check(f"{name}: the navigation", seen["nav"], ["Overview", "Plants", "Buttons", "Devices", "Dead letters", "Live"])
    if name == "overview":
        seen["status"] = driver.find_element(By.CSS_SELECTOR, "[data-status]").get_attribute("data-status")
        facts = dict(zip(texts(driver, "dl.facts dt"), texts(driver, "dl.facts dd")))
        seen["facts"] = facts
        check("overview: status as /readyz", seen["status"], expect["status"])
        check("overview: dead letters", facts.get("Dead letters kept"), str(expect["dead_letters"]))
        check("overview: plants", facts.get("Plants"), str(len(expect["plants"])))
    elif name == "plants":
        seen["plants"] = texts(driver, "section.plant h2")
        check("plants: names", seen["plants"], expect["plants"])
        seen["alerts"] = [section.find_element(By.XPATH, ".//dt[.='Care alerts']/following-sibling::dd[1]").text
                          for section in driver.find_elements(By.CSS_SELECTOR, "section.plant")]
        check("plants: care alerts", seen["alerts"], expect["alerts"])
    elif name == "plant":
        seen["lines"] = len(driver.find_elements(By.CSS_SELECTOR, "svg.chart polyline"))
        seen["rows"] = len(driver.find_elements(By.CSS_SELECTOR, "main table tbody tr"))
        check("plant: the chart's two lines", seen["lines"], 2)
        check("plant: a row per point", seen["rows"] > 0, True)
    elif name == "buttons":
        rows = driver.find_elements(By.CSS_SELECTOR, "main table tbody tr")
        seen["buttons"] = {r.find_element(By.TAG_NAME, "th").text: r.find_elements(By.TAG_NAME, "td")[0].text for r in rows}
        check("buttons: counts", seen["buttons"], expect["buttons"])
    elif name == "devices":
        rows = driver.find_elements(By.CSS_SELECTOR, "main table tbody tr")
        seen["devices"] = {r.find_element(By.TAG_NAME, "th").text: r.find_elements(By.TAG_NAME, "td")[1].text for r in rows}
        check("devices: status", seen["devices"], expect["devices"])
    elif name == "device":
        seen["log"] = texts(driver, "main table tbody pre")
        check("device: the log line", expect["log_line"] in seen["log"], True)
    elif name == "dead-letters":
        seen["reasons"] = texts(driver, "main table .reason")
        seen["payloads"] = texts(driver, "main table pre")
        check("dead letters: reason", seen["reasons"], [expect["dead_letter_reason"]])
        check("dead letters: payload as text", seen["payloads"], [expect["dead_letter_payload"]])
    elif name == "live":
        seen["live"] = texts(driver, "main table td")
        check("live: the request decoded", any(expect["live_summary"] in cell for cell in seen["live"]), True)
    return seen


def main():
    parser = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    parser.add_argument("--url", required=True)
    parser.add_argument("--expect", required=True, help="a JSON file of what the pages must show")
    parser.add_argument("--out", required=True, help="the directory for the screenshots")
    arguments = parser.parse_args()
    expect = json.load(open(arguments.expect, encoding="utf-8"))
    os.makedirs(arguments.out, exist_ok=True)
    pages = [("overview", "/"), ("plants", "/plants"), ("plant", expect["plant_path"]), ("buttons", "/buttons"),
             ("devices", "/devices"), ("device", expect["device_path"]), ("dead-letters", "/dead-letters"),
             ("live", "/live")]
    driver = start_chromium()
    try:
        for width_name, (width, height, mobile) in WIDTHS.items():
            driver.execute_cdp_cmd("Emulation.setDeviceMetricsOverride", {
                "width": width, "height": height, "deviceScaleFactor": 1, "mobile": mobile})
            for name, path in pages:
                driver.get(arguments.url + path)
                seen = read(driver, name, expect)
                overflow = driver.execute_script(
                    "return document.documentElement.scrollWidth - document.documentElement.clientWidth")
                check(f"{name} at {width_name}: no sideways scrolling", overflow <= 0, True)
                say({"event": "page", "page": name, "width": width_name, "seen": seen})
                shot = os.path.join(arguments.out, f"console-{name}-{width_name}.png")
                driver.save_screenshot(shot)
                say({"event": "screenshot", "path": shot})
                # After the screenshot, the first Tab reaches the skip link, which leads to the main landmark.
                driver.find_element(By.TAG_NAME, "body").send_keys(Keys.TAB)
                focused = driver.execute_script("return document.activeElement.getAttribute('href')")
                check(f"{name} at {width_name}: the first Tab focuses the skip link", focused, "#main")
                for entry in driver.get_log("browser"):
                    say({"event": "console", "level": entry.get("level"), "message": entry.get("message")})
                    if entry.get("level") in ("SEVERE", "WARNING"):
                        problems.append(f"{name} at {width_name}: browser console: {entry.get('message')}")
        # The live view's filter is a form the policy allows: filled in and sent as a person would, it
        # narrows the page to the plant tracker's messages, with no refusal in the browser's console.
        driver.get(arguments.url + "/live")
        field = driver.find_element(By.ID, "f-service")
        field.send_keys("plant")
        field.submit()
        check("live: the filter's address", "service=plant" in driver.current_url, True)
        filtered = texts(driver, "main table td")
        check("live: the filtered page keeps the request", any(expect["live_summary"] in c for c in filtered), True)
        for entry in driver.get_log("browser"):
            if entry.get("level") in ("SEVERE", "WARNING"):
                problems.append(f"live filter: browser console: {entry.get('message')}")
        # The policy is in force and its violations reach the log read above: an inline script put
        # in the page is refused, and the refusal is logged (and not counted as a problem here).
        driver.get(arguments.url + "/")
        driver.execute_script(
            "const s = document.createElement('script'); s.textContent = 'window.ran = 1'; document.body.append(s)")
        ran = driver.execute_script("return window.ran === 1")
        refusals = [e.get("message", "") for e in driver.get_log("browser") if "Content Security Policy" in e.get("message", "")]
        say({"event": "csp-probe", "ran": ran, "refusals": refusals})
        check("an inline script is refused by the policy", (ran, bool(refusals)), (False, True))
    finally:
        driver.quit()
    say({"event": "end", "ok": not problems, "problems": problems})
    return 0 if not problems else 1


if __name__ == "__main__":
    sys.exit(main())
