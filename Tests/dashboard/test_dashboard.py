"""The dashboard at /__mishap/ui/, driven in headless Chromium through Selenium.

Each test class starts its own `mishap serve` on a free port (MISHAP_BIN, default the debug
build), and one browser; each test opens the page, makes real HTTP requests to Mishap with
urllib (in sessions of its own, so tests never see each other's cycles) and waits for what the
page shows. With DASHBOARD_SCREENSHOTS=1 the tests also write docs/dashboard-*.png.

    python -m unittest discover -s Tests/dashboard -v      # needs selenium, chromium, chromedriver

The binary serves the page it was built with; set MISHAP_UI_DIR=Sources/MishapService/Dashboard
to test the files on disk instead (the server reads them at each request then).
"""

import json
import os
import re
import shutil
import signal
import socket
import subprocess
import tempfile
import threading
import time
import unittest
import urllib.error
import urllib.parse
import urllib.request
import uuid

from selenium import webdriver
from selenium.common.exceptions import NoSuchElementException, StaleElementReferenceException, TimeoutException
from selenium.webdriver.chrome.service import Service
from selenium.webdriver.common.by import By
from selenium.webdriver.support.ui import Select, WebDriverWait

REPO = os.path.dirname(os.path.dirname(os.path.dirname(os.path.abspath(__file__))))
MISHAP = os.path.abspath(os.environ.get("MISHAP_BIN", os.path.join(REPO, ".build", "debug", "mishap")))
SCREENSHOTS = os.environ.get("DASHBOARD_SCREENSHOTS") == "1"
WAIT = 10  # seconds any expected content may take to appear
SERVER_ENVIRONMENT = dict(os.environ)
if SERVER_ENVIRONMENT.get("MISHAP_UI_DIR"):  # the servers run in other folders
    SERVER_ENVIRONMENT["MISHAP_UI_DIR"] = os.path.abspath(SERVER_ENVIRONMENT["MISHAP_UI_DIR"])

# The requests table, read in one call: each row's journal id and the text of its cells.
ROWS_JS = """return [...document.querySelectorAll('#requests-body tr')].map(row =>
  ({id: Number(row.dataset.id), cells: [...row.cells].map(cell => cell.textContent)}));"""
TIME, METHOD, PATH, STATUS, RULE, ENDPOINT, SESSION, DELAY, DURATION = range(9)


class Mishap:
    """A `mishap serve` on a free port; stopped with SIGTERM."""

    def __init__(self, folder=REPO, *options):
        # Run in `folder` with its ./scenarios, so sources read "scenarios/login.yaml:37".
        self.process = subprocess.Popen(
            [MISHAP, "serve", "--port", "0", "--scenarios", "scenarios", "--log-level", "warning", *options],
            cwd=folder, env=SERVER_ENVIRONMENT, stdout=subprocess.PIPE, stderr=subprocess.DEVNULL, text=True)
        line = self.process.stdout.readline()
        match = re.search(r"listening on (http://\S+)", line)
        if not match:
            self.process.kill()
            raise RuntimeError(f"mishap did not start: {line!r}")
        self.url = match.group(1)
        threading.Thread(target=self.process.stdout.read, daemon=True).start()

    def stop(self):
        self.process.send_signal(signal.SIGTERM)
        self.process.wait(timeout=15)

    def request(self, path, session=None, method="GET", body=None, headers=None):
        """A client request, in a session when given: (status, body)."""
        target = self.url + (f"/__session/{session}" if session else "") + path
        request = urllib.request.Request(target, data=body, method=method, headers=headers or {})
        try:
            with urllib.request.urlopen(request, timeout=10) as response:
                return response.status, response.read()
        except urllib.error.HTTPError as error:
            return error.code, error.read()

    def admin(self, method, path, body=None, token=None, **query):
        """An admin call: (status, parsed JSON)."""
        target = f"{self.url}/__mishap/{path}" + ("?" + urllib.parse.urlencode(query) if query else "")
        headers = {"X-Mishap-Admin-Token": token} if token else {}
        request = urllib.request.Request(target, data=body.encode() if body else None, method=method, headers=headers)
        try:
            with urllib.request.urlopen(request, timeout=10) as response:
                return response.status, json.loads(response.read())
        except urllib.error.HTTPError as error:
            return error.code, json.loads(error.read())


def new_session(label):
    return f"{label}-{uuid.uuid4().hex[:8]}"


class DashboardTestCase(unittest.TestCase):
    """One Mishap and one browser per class; `open_page` loads the dashboard afresh."""

    folder = REPO  # the folder whose scenarios/ Mishap serves
    options = ()

    @classmethod
    def setUpClass(cls):
        cls.mishap = Mishap(cls.folder, *cls.options)
        try:
            chrome = webdriver.ChromeOptions()
            chrome.binary_location = "/usr/bin/chromium"
            for argument in ("--headless=new", "--no-sandbox", "--disable-gpu", "--window-size=1400,900"):
                chrome.add_argument(argument)
            chrome.set_capability("goog:loggingPrefs", {"browser": "ALL"})
            cls.driver = webdriver.Chrome(options=chrome, service=Service("/usr/bin/chromedriver"))
        except Exception:
            cls.mishap.stop()
            raise

    @classmethod
    def tearDownClass(cls):
        cls.driver.quit()
        cls.mishap.stop()

    def tearDown(self):
        # The page must never break: no script error, no load refused by the CSP, no failed load
        # (a favicon...). Admin calls the API refuses (400, 401, 422) are the page's to show.
        problems = [entry["message"] for entry in self.driver.get_log("browser") if entry["level"] == "SEVERE"
                    and not (entry["source"] == "network" and "/__mishap/" in entry["message"]
                             and "/__mishap/ui/" not in entry["message"])]
        self.assertEqual(problems, [], "the browser console reported problems")

    # -- helpers --

    def open_page(self, tab=None, path="/__mishap/ui/"):
        self.driver.get(self.mishap.url + path)
        self.wait_for(lambda: "live" in self.find("connection").text, "the page never went live")
        if tab:
            self.find("tab-" + tab).click()

    def find(self, element_id):
        return self.driver.find_element(By.ID, element_id)

    def css(self, selector):
        return self.driver.find_elements(By.CSS_SELECTOR, selector)

    def wait_for(self, condition, message, timeout=WAIT):
        """Waits until condition() is truthy and returns its value; fails the test after timeout."""
        try:
            return WebDriverWait(self.driver, timeout, poll_frequency=0.1,
                                 ignored_exceptions=(NoSuchElementException, StaleElementReferenceException)
                                 ).until(lambda _: condition())
        except TimeoutException:
            self.fail(f"{message} (waited {timeout} s)")

    def rows(self):
        return self.driver.execute_script(ROWS_JS)

    def rows_of(self, session):
        return [row for row in self.rows() if row["cells"][SESSION] == session]

    def rule_row(self, endpoint, rule):
        """The row of a rule in the Rules tab."""
        # find_element raises NoSuchElementException, which wait_for waits through, while the
        # list is still being drawn.
        return self.driver.find_element(By.CSS_SELECTOR, f'#endpoint-list details[data-endpoint="{endpoint}"] tr[data-rule="{rule}"]')

    def choose(self, element_id, text):
        Select(self.find(element_id)).select_by_visible_text(text)

    def screenshot(self, name):
        if SCREENSHOTS:
            self.driver.save_screenshot(os.path.join(REPO, "docs", f"dashboard-{name}.png"))


class RequestsTests(DashboardTestCase):
    """The live journal, its filters, its detail panel, and the unmatched requests."""

    def test_rows_appear_live_without_reloading(self):
        session = new_session("live")
        self.open_page()
        self.assertEqual(self.rows_of(session), [])
        # Made after the page loaded: the page must fetch them by itself.
        for name in ("someone", "maintenance", "maintenance", "servererror", "ratelimited"):
            self.mishap.request("/isUserNameAvailable?userName=" + name, session=session)
        self.mishap.request("/login", session=session, method="POST", body=b'{"email":"a@b.c","password":"secret"}',
                            headers={"Content-Type": "application/json"})
        rows = self.wait_for(lambda: len(self.rows_of(session)) == 6 and self.rows_of(session), "the new rows never appeared")
        self.assertEqual([row["cells"][STATUS] for row in rows], ["404", "429", "500", "500", "500", "200"])  # newest first
        self.assertEqual(rows[0]["cells"][RULE], "unknownUser")
        self.assertEqual(rows[0]["cells"][ENDPOINT], "POST /login")
        self.assertEqual(rows[-1]["cells"][PATH], "/isUserNameAvailable?userName=someone")
        self.assertEqual([row["id"] for row in rows], sorted((row["id"] for row in rows), reverse=True))
        # The duration, when this Mishap's journal records one.
        journal = self.mishap.admin("GET", "requests", session=session)[1]["requests"]
        for row, entry in zip(rows, reversed(journal)):
            self.assertEqual(row["id"], entry["id"])
            if "durationMs" in entry:
                self.assertRegex(row["cells"][DURATION], r"^\d+(\.\d+)? ms$")
        self.screenshot("requests")

    def test_the_poll_reads_no_bodies_and_the_detail_reads_the_whole_request(self):
        session = new_session("big")
        body = ("x" * 60_000).encode()
        self.mishap.request("/login", session=session, method="POST", body=body, headers={"Content-Type": "text/plain"})
        self.open_page()
        rows = self.wait_for(lambda: len(self.rows_of(session)) == 1 and self.rows_of(session), "the row never appeared")
        # Every journal call the page made so far was a poll: small pages, no bodies.
        polls = self.driver.execute_script("""return performance.getEntriesByType('resource')
          .filter(entry => entry.name.includes('/__mishap/requests?'))
          .map(entry => ({url: entry.name, size: entry.encodedBodySize}));""")
        self.assertTrue(polls, "no journal call seen")
        for poll in polls:
            query = urllib.parse.parse_qs(urllib.parse.urlparse(poll["url"]).query)
            self.assertEqual(query.get("bodyBytes"), ["0"], poll["url"])
            self.assertLessEqual(int(query["limit"][0]), 100, poll["url"])
            self.assertLess(poll["size"], 20_000, poll)
        # Opening the request reads it whole.
        self.css(f'#requests-body tr[data-id="{rows[0]["id"]}"]')[0].click()
        panel = self.find("request-detail")
        self.wait_for(lambda: panel.is_displayed() and "POST /login" in panel.text, "the detail did not open")
        self.assertEqual(self.find("detail-body").text, "x" * 60_000)

    def test_the_page_works_without_its_final_slash(self):
        # /__mishap/ui is the page itself, not a redirect: its files and the API are named by
        # absolute paths, so they load from there too (tearDown fails on any failed load).
        session = new_session("bare")
        self.open_page(path="/__mishap/ui")
        self.assertTrue(self.driver.current_url.endswith("/__mishap/ui"), self.driver.current_url)
        self.mishap.request("/isUserNameAvailable?userName=someone", session=session)
        self.wait_for(lambda: len(self.rows_of(session)) == 1, "the new row never appeared")

    def test_a_reset_from_elsewhere_clears_its_rows(self):
        session, other = new_session("reset-elsewhere"), new_session("reset-kept")
        self.open_page()
        self.mishap.request("/isUserNameAvailable?userName=someone", session=session)
        self.mishap.request("/isUserNameAvailable?userName=someone", session=other)
        self.wait_for(lambda: len(self.rows_of(session)) == 1 and len(self.rows_of(other)) == 1, "rows missing")
        # Not through the page: as a test or curl would (ids keep counting, so only the
        # journal's reset count tells the page).
        status, answer = self.mishap.admin("POST", "reset", session=session)
        self.assertEqual(status, 200, answer)
        self.wait_for(lambda: self.rows_of(session) == [], "the reset session's rows stayed")
        self.assertEqual(len(self.rows_of(other)), 1, "another session's row went too")
        self.mishap.request("/isUserNameAvailable?userName=servererror", session=session)
        rows = self.wait_for(lambda: len(self.rows_of(session)) == 1 and self.rows_of(session), "no row after the reset")
        self.assertEqual(rows[0]["cells"][STATUS], "500")

    def test_a_hung_request_gets_its_duration_when_it_ends(self):
        session = new_session("hung")
        self.open_page()
        host, port = urllib.parse.urlsplit(self.mishap.url).netloc.split(":")
        client = socket.create_connection((host, int(port)), timeout=10)
        try:
            client.sendall(f"GET /__session/{session}/isUserNameAvailable?userName=timeout HTTP/1.1\r\n"
                           f"Host: {host}\r\n\r\n".encode())
            rows = self.wait_for(lambda: len(self.rows_of(session)) == 1 and self.rows_of(session), "no row for the hang")
            self.assertEqual(rows[0]["cells"][STATUS], "hang")
            self.assertEqual(rows[0]["cells"][DURATION], "", "a duration before the request ended")
            time.sleep(1.2)  # a poll or more while it hangs
        finally:
            client.close()
        # Fetched while open, the row is fetched again until its duration is known.
        row = self.wait_for(lambda: (self.rows_of(session) or [None])[0] if re.match(
            r"^\d+(\.\d+)? ms$", (self.rows_of(session) or [{"cells": [""] * 9}])[0]["cells"][DURATION]) else None,
            "the row never got its duration")
        self.assertGreaterEqual(float(row["cells"][DURATION].split()[0]), 1000)

    def test_polling_stops_while_the_page_is_hidden(self):
        session = new_session("hidden")
        self.open_page()
        # Headless Chromium never hides a tab: make the page believe it is hidden.
        self.driver.execute_script("Object.defineProperty(document, 'hidden', {configurable: true, get: () => true});"
                                   "document.dispatchEvent(new Event('visibilitychange'));")
        self.wait_for(lambda: self.find("connection").text == "paused (page hidden)", "the page did not pause")
        self.mishap.request("/isUserNameAvailable?userName=someone", session=session)
        time.sleep(2.5)  # more than two rounds of polling
        self.assertEqual(self.rows_of(session), [], "the page polled while hidden")

        self.driver.execute_script("delete document.hidden; document.dispatchEvent(new Event('visibilitychange'));")
        self.wait_for(lambda: len(self.rows_of(session)) == 1, "the page did not poll again once visible")
        self.assertEqual(self.find("connection").text, "live")

    def test_filters_by_session_and_status(self):
        first, second = new_session("filter-a"), new_session("filter-b")
        for name in ("someone", "servererror", "ratelimited"):
            self.mishap.request("/isUserNameAvailable?userName=" + name, session=first)
        self.mishap.request("/isUserNameAvailable?userName=servererror", session=second)
        self.open_page()
        self.wait_for(lambda: len(self.rows_of(first)) == 3 and len(self.rows_of(second)) == 1, "rows missing")

        self.choose("filter-session", first)
        self.wait_for(lambda: {row["cells"][SESSION] for row in self.rows()} == {first}, "the session filter kept other sessions")
        self.assertEqual(len(self.rows()), 3)

        self.choose("filter-status", "5xx")
        rows = self.wait_for(lambda: len(self.rows()) == 1 and self.rows(), "the status filter did not apply")
        self.assertEqual((rows[0]["cells"][STATUS], rows[0]["cells"][RULE]), ("500", "serverError"))

        self.choose("filter-session", "all")
        rows = self.wait_for(lambda: len(self.rows()) >= 2 and self.rows(), "clearing the session filter")
        self.assertTrue(all(row["cells"][STATUS].startswith("5") for row in rows))
        self.assertIn(second, {row["cells"][SESSION] for row in rows})

        # A request made now that fits the filters joins the table; one that does not, does not.
        self.mishap.request("/isUserNameAvailable?userName=someone", session=second)
        self.mishap.request("/isUserNameAvailable?userName=servererror", session=second)
        self.wait_for(lambda: len(self.rows_of(second)) == 2, "a new row fitting the filters did not show")
        self.assertTrue(all(row["cells"][STATUS] == "500" for row in self.rows_of(second)))

    def test_detail_shows_query_headers_body_and_state_changes(self):
        session = new_session("detail")
        marker = "value-" + uuid.uuid4().hex[:6]
        self.mishap.request("/token", session=session, method="POST", body=b"grant_type=password&username=john@doe.com&password=onlyjohnknowsme",
                            headers={"Content-Type": "application/x-www-form-urlencoded", "X-Trace": marker})
        self.mishap.request("/isUserNameAvailable?userName=detail-" + marker, session=session, headers={"X-Trace": marker})
        self.open_page()
        rows = self.wait_for(lambda: len(self.rows_of(session)) == 2 and self.rows_of(session), "rows missing")
        self.css(f'#requests-body tr[data-id="{rows[1]["id"]}"]')[0].click()  # the older: the sign-in

        panel = self.find("request-detail")
        self.wait_for(lambda: panel.is_displayed() and "POST /token" in panel.text, "the detail did not open")
        headers = self.find("detail-headers").text
        self.assertIn("X-Trace " + marker, headers)
        self.assertIn("X-Mishap-Session " + session, headers)
        self.assertEqual(self.find("detail-body").text, "grant_type=password&username=john@doe.com&password=onlyjohnknowsme")
        self.assertIn("signIn", panel.text)  # the rule
        self.assertIn("no query", self.find("detail-query").text)
        changes = [row.text for row in self.find("detail-state-changes").find_elements(By.CSS_SELECTOR, "tbody tr")]
        self.assertIn("accessTokenLive false true 60000 ms", changes)
        self.assertTrue(any(re.fullmatch(r'accessToken "" "[0-9a-f]{32}"', change) for change in changes), changes)
        self.screenshot("detail")

        self.css(f'#requests-body tr[data-id="{rows[0]["id"]}"]')[0].click()
        self.wait_for(lambda: "GET /isUserNameAvailable" in panel.text, "the detail did not follow the click")
        self.assertEqual(self.find("detail-query").find_element(By.CSS_SELECTOR, "tbody tr").text, "userName detail-" + marker)
        self.assertEqual(self.find("detail-runtime-rule").text, "none: the scenario files answered")
        self.assertIn("no state changed", self.find("detail-state-changes").text)
        self.find("detail-close").click()
        self.wait_for(lambda: not panel.is_displayed(), "the detail did not close")

    def test_detail_shows_what_a_network_profile_did(self):
        session = new_session("network")
        status, _ = self.mishap.admin("PUT", "network", body='{"latency": "50ms", "bandwidth": {"down": "20kB/s"}}', session=session)
        self.assertEqual(status, 200)
        self.mishap.request("/isUserNameAvailable?userName=shaped", session=session)
        self.open_page()
        rows = self.wait_for(lambda: len(self.rows_of(session)) == 1 and self.rows_of(session), "the row is missing")
        self.css(f'#requests-body tr[data-id="{rows[0]["id"]}"]')[0].click()
        panel = self.find("request-detail")
        self.wait_for(lambda: panel.is_displayed() and "GET /isUserNameAvailable" in panel.text, "the detail did not open")
        self.assertEqual(self.find("detail-network").text, "custom: +50 ms, 20 kB/s")

    def test_unmatched_shows_the_near_miss(self):
        session = new_session("unmatched")
        self.assertEqual(self.mishap.request("/logn", session=session)[0], 404)
        self.open_page("unmatched")
        item = self.wait_for(lambda: [li for li in self.css("#unmatched-list > li") if session in li.text], "the 404 is not listed")[0]
        self.assertIn("GET /logn", item.text)
        self.assertEqual(item.find_element(By.CSS_SELECTOR, ".near-miss .reason").text,
                         "no endpoint has the path /logn; did you mean /login?")
        self.assertIn("POST /login", item.find_element(By.CSS_SELECTOR, ".near-miss").text)


class ScenarioTests(DashboardTestCase):
    """Rules and their hits, sessions and their state, retries, the verdict, and the controls."""

    def test_rules_show_source_and_hits(self):
        session = new_session("rules")
        for _ in range(3):
            self.mishap.request("/isUserNameAvailable?userName=servererror", session=session)
        self.open_page("rules")
        row = self.wait_for(lambda: self.rule_row("GET /isUserNameAvailable", "serverError"), "no serverError row")
        self.assertRegex(row.find_element(By.CSS_SELECTOR, ".source").text, r"^scenarios/isUserNameAvailable\.yaml:\d+$")
        hits = lambda: self.rule_row("GET /isUserNameAvailable", "serverError").find_element(By.CSS_SELECTOR, ".hits").text
        self.wait_for(lambda: hits().isdigit() and int(hits()) >= 3,
                      "the hits of serverError were not counted")
        never = self.rule_row("GET /isUserNameAvailable", "gatewayTimeout")
        self.assertEqual(never.find_element(By.CSS_SELECTOR, ".hits").text, "0")
        self.assertRegex(self.rule_row("POST /login", "success").find_element(By.CSS_SELECTOR, ".source").text, r"^scenarios/login\.yaml:\d+$")
        self.assertIn("journal holds now", self.find("view-rules").text)

        # A rule added at runtime is listed, with its hits, and the hit count follows new requests.
        status, added = self.mishap.admin("POST", "rules", "endpoint: GET /isUserNameAvailable\nrules:\n  - name: closed\n"
                                          "    respond: { status: 503 }\n", session=session, times=5)
        self.assertEqual(status, 201)
        self.mishap.request("/isUserNameAvailable?userName=someone", session=session)
        runtime = self.wait_for(lambda: [row for row in self.css("#runtime-rules tbody tr") if row.text.startswith(added["id"] + " ")
                                         and "4 of 5" in row.text], "the runtime rule is not listed with its answers left")[0]
        self.assertIn("closed", runtime.text)
        self.assertIn(session, runtime.text)
        self.screenshot("rules")

    def test_session_state_cycles_and_reset(self):
        session = new_session("state")
        self.assertEqual(self.mishap.request("/isUserNameAvailable?userName=maintenance", session=session)[0], 500)
        self.assertEqual(self.mishap.request("/isUserNameAvailable?userName=maintenance", session=session)[0], 500)
        self.assertEqual(self.mishap.admin("POST", "state", '{"meCalls": 2}', session=session)[0], 200)
        self.open_page("sessions")
        button = self.wait_for(lambda: self.css(f'#session-list button[data-session="{session}"]'), "the session is not listed")[0]
        button.click()
        self.wait_for(lambda: self.find("session-title").text == "Session " + session, "the session was not chosen")
        self.wait_for(lambda: self.css('#session-state td.value[data-name="meCalls"]')[0].text == "2", "meCalls is not shown as 2")
        self.assertEqual(self.css('#session-state td.value[data-name="searchOutage"]')[0].text, "false")
        cycle = [row.text for row in self.css("#session-cycles tbody tr") if "GET /isUserNameAvailable maintenance" in row.text]
        self.assertEqual(cycle, ["GET /isUserNameAvailable maintenance 3 of 3 pass"])

        self.find("session-reset").click()
        self.wait_for(lambda: self.find("session-message").text == f"Reset: session {session}", "no answer to the reset")
        self.wait_for(lambda: self.css('#session-state td.value[data-name="meCalls"]')[0].text == "0", "the state did not start over")
        cycle = [row.text for row in self.css("#session-cycles tbody tr") if "GET /isUserNameAvailable maintenance" in row.text]
        self.assertEqual(cycle, ["GET /isUserNameAvailable maintenance 1 of 3 500"])
        # Without the reset this would be the cycle's third step, a 200.
        self.assertEqual(self.mishap.request("/isUserNameAvailable?userName=maintenance", session=session)[0], 500)

    def test_retries_timeline_marks_too_early_and_honoured(self):
        hasty, patient = new_session("hasty"), new_session("patient")
        # Maintenance asks for 17 s; coming back at once is too early.
        self.mishap.request("/isUserNameAvailable?userName=maintenance", session=hasty)
        self.mishap.request("/isUserNameAvailable?userName=maintenance", session=hasty)
        # A rule asking for 1 s: once too early, then after waiting, honoured.
        status, _ = self.mishap.admin("POST", "rules", 'endpoint: GET /isUserNameAvailable\nrules:\n  - name: closed\n'
                                      '    respond: { status: 503, headers: { Retry-After: "1" } }\n', session=patient, times=2)
        self.assertEqual(status, 201)
        self.assertEqual(self.mishap.request("/isUserNameAvailable?userName=someone", session=patient)[0], 503)
        self.assertEqual(self.mishap.request("/isUserNameAvailable?userName=someone", session=patient)[0], 503)
        time.sleep(1.1)
        self.assertEqual(self.mishap.request("/isUserNameAvailable?userName=someone", session=patient)[0], 200)

        self.open_page("retries")
        self.wait_for(lambda: hasty in [o.text for o in Select(self.find("retries-session")).options], "the session is not offered")
        self.choose("retries-session", hasty)
        self.choose("retries-endpoint", "GET /isUserNameAvailable")
        marks = self.wait_for(lambda: self.css("#timeline .verdict.too-early"), "no too-early mark")
        self.assertEqual(len(marks), 1)
        self.assertEqual(marks[0].find_element(By.CSS_SELECTOR, "text").text, "too early")
        self.assertEqual(len(self.css("#timeline .verdict.honoured")), 0)
        self.assertEqual(len(self.css("#timeline .window")), 2)
        self.assertEqual(len(self.css("#timeline .request")), 2)

        self.choose("retries-session", patient)
        self.wait_for(lambda: self.css("#timeline .verdict.honoured"), "no honoured mark")
        self.assertEqual([m.get_attribute("data-verdict") for m in self.css("#timeline .verdict")], ["too-early", "honoured"])
        self.assertEqual(self.css("#timeline .verdict.honoured text")[0].text, "honoured")
        self.assertEqual(len(self.css("#timeline .request")), 3)
        verdicts = [cell.text for cell in self.css("#retries-table tbody td:last-child")]
        self.assertEqual(verdicts, ["too early", "honoured"])
        self.assertIn("2 answers with Retry-After, 1 retried too early", self.find("retries-violations").text)
        self.screenshot("retries")

    def test_verdict_tab_shows_each_check_its_evidence_and_the_timeline(self):
        hasty, calm = new_session("verdict-hasty"), new_session("verdict-calm")
        # Maintenance asks for 17 s; coming back at once is too early: retryAfter fails.
        self.mishap.request("/isUserNameAvailable?userName=maintenance", session=hasty)
        self.mishap.request("/isUserNameAvailable?userName=maintenance", session=hasty)
        self.assertEqual(self.mishap.request("/isUserNameAvailable?userName=someone", session=calm)[0], 200)
        status, verdict = self.mishap.admin("GET", "verdict", session=hasty)
        self.assertEqual(status, 200, verdict)
        self.assertFalse(verdict["passed"])
        expected = {check["name"]: check for check in verdict["checks"]}
        self.assertFalse(expected["retryAfter"]["passed"])

        # Reached from the Sessions tab, for the session shown there.
        self.open_page("sessions")
        self.wait_for(lambda: self.css(f'#session-list button[data-session="{hasty}"]'), "the session is not listed")[0].click()
        self.wait_for(lambda: self.find("session-title").text == "Session " + hasty, "the session was not chosen")
        self.find("session-verdict").click()
        self.wait_for(lambda: self.find("view-verdict").is_displayed(), "the Verdict tab did not open")
        self.assertEqual(Select(self.find("verdict-session")).first_selected_option.text, hasty)
        checks = self.wait_for(lambda: len(self.css("#verdict-checks > li")) == len(verdict["checks"])
                               and self.css("#verdict-checks > li"), "the checks are not shown")
        self.assertEqual([c.get_attribute("data-check") for c in checks], [c["name"] for c in verdict["checks"]])
        self.assertEqual([c["name"] for c in verdict["checks"]][:7],
                         ["retryAfter", "backoff", "attemptBudget", "unsafeRetry", "clientErrorRetry", "oneRefresh", "giveUp"])
        marks = {True: "✓", False: "✗", None: "–"}
        for item in checks:
            check = expected[item.get_attribute("data-check")]
            self.assertEqual(item.find_element(By.CSS_SELECTOR, ".mark").text, marks[check["passed"]], check["name"])
            self.assertEqual(item.find_element(By.CSS_SELECTOR, ".check-name").text, check["name"])
            self.assertEqual(item.find_element(By.CSS_SELECTOR, ".summary").text, check["summary"])
        failed = self.css('#verdict-checks li[data-check="retryAfter"]')[0]
        self.assertEqual(failed.get_attribute("data-passed"), "fail")
        # A failed check's evidence is open: each request by its journal id, with what it was answered.
        evidence = failed.find_elements(By.CSS_SELECTOR, "details.evidence[open] li")
        self.assertEqual([int(li.get_attribute("data-id")) for li in evidence], [e["id"] for e in expected["retryAfter"]["evidence"]])
        self.assertTrue(evidence and all("GET /isUserNameAvailable?userName=maintenance → 500" in li.text for li in evidence),
                        [li.text for li in evidence])
        self.assertEqual(self.find("verdict-overall").text, "failed")
        grouping = self.find("verdict-grouping").text
        self.assertTrue(grouping.startswith("2 requests judged; at most 5 attempts, give up within 60 s. Grouping: "), grouping)
        self.assertIn(verdict["grouping"], grouping)
        # The session's retry timeline, as the Retries tab draws it.
        self.wait_for(lambda: len(self.css("#verdict-timeline .verdict.too-early")) == 1, "no too-early mark on the timeline")
        self.assertEqual(len(self.css("#verdict-timeline .request")), 2)
        self.assertEqual(len(self.css("#verdict-timeline .window")), 2)
        self.screenshot("verdict")

        # The attempt budget goes to the server: two attempts are over a budget of one.
        budget = self.find("verdict-max-attempts")
        budget.send_keys("1")
        self.driver.execute_script("arguments[0].dispatchEvent(new Event('change'))", budget)
        self.wait_for(lambda: self.css('#verdict-checks li[data-check="attemptBudget"]')[0].get_attribute("data-passed") == "fail",
                      "a budget of 1 did not fail attemptBudget")
        # A limit the server refuses is shown, not swallowed.
        limit = self.find("verdict-give-up")
        limit.send_keys("soon")
        self.driver.execute_script("arguments[0].dispatchEvent(new Event('change'))", limit)
        error = self.find("verdict-error")
        self.wait_for(lambda: error.is_displayed() and error.text.startswith("Error 400"), "the refused limit is not shown")
        limit.clear()
        budget.clear()
        self.driver.execute_script("arguments[0].dispatchEvent(new Event('change'))", limit)
        self.wait_for(lambda: not error.is_displayed(), "the error stayed")

        # Another session, whose client met no failure: passed, nothing failed.
        self.choose("verdict-session", calm)
        self.wait_for(lambda: self.find("verdict-overall").text == "passed", "the calm session did not pass")
        self.assertEqual(self.css('#verdict-checks li[data-passed="fail"]'), [])
        self.assertEqual(len(self.css("#verdict-timeline .verdict")), 0)
        self.assertEqual(len(self.css("#verdict-timeline .request")), 1)

    def test_controls_force_a_rule(self):
        session = new_session("force")
        self.open_page("controls")
        self.wait_for(lambda: len(Select(self.find("force-endpoint")).options) == 5, "the endpoints are not offered")
        self.choose("force-endpoint", "GET /isUserNameAvailable")
        self.choose("force-rule", "serverError")
        times = self.find("force-times")
        times.clear()
        times.send_keys("0")
        self.find("force-submit").click()
        result = self.find("force-result")
        self.wait_for(lambda: "'times' must be a whole number" in result.text, "the refusal is not shown")
        self.assertIn("error", result.get_attribute("class"))

        times.clear()
        times.send_keys("1")
        self.find("force-session").send_keys(session)
        self.find("force-submit").click()
        self.wait_for(lambda: "answers with serverError for the next 1 request(s) of session " + session in result.text, "no answer shown")
        self.assertNotIn("error", result.get_attribute("class"))
        self.screenshot("controls")

        self.assertEqual(self.mishap.request("/isUserNameAvailable?userName=someone", session=session)[0], 500)
        self.assertEqual(self.mishap.request("/isUserNameAvailable?userName=someone", session=session)[0], 200)
        # The journal says the forced rule answered, through the runtime rule the form added.
        rule_id = re.search(r"\(runtime rule (\w+)\)", result.text).group(1)
        self.find("tab-requests").click()
        rows = self.wait_for(lambda: len(self.rows_of(session)) == 2 and self.rows_of(session), "the requests are not listed")
        self.assertEqual([(row["cells"][STATUS], row["cells"][RULE]) for row in rows], [("200", "available"), ("500", "serverError")])
        self.css(f'#requests-body tr[data-id="{rows[1]["id"]}"]')[0].click()
        self.wait_for(lambda: self.find("detail-runtime-rule").text == rule_id, "the detail does not name the runtime rule")


class ReloadTests(DashboardTestCase):
    """A reload of broken scenarios, on a copy of them."""

    @classmethod
    def setUpClass(cls):
        cls.folder = tempfile.mkdtemp(prefix="mishap-dashboard-")
        shutil.copytree(os.path.join(REPO, "scenarios"), os.path.join(cls.folder, "scenarios"))
        cls.options = ("--watch", "off")  # only the button reloads
        super().setUpClass()

    @classmethod
    def tearDownClass(cls):
        super().tearDownClass()
        shutil.rmtree(cls.folder)

    def setUp(self):
        # Each test edits search.yaml; put it back (and serve it) afterwards.
        self.search = os.path.join(self.folder, "scenarios", "search.yaml")
        with open(self.search) as file:
            self.original = file.read()
        self.addCleanup(self.write_search, self.original, True)

    def write_search(self, text, reload=False):
        with open(self.search, "w") as file:
            file.write(text)
        if reload:
            self.assertEqual(self.mishap.admin("POST", "reload")[0], 200)

    def test_reload_shows_located_problems(self):
        self.open_page("controls")
        self.assertFalse(self.find("reload-problems").is_displayed())
        self.write_search("endpoint: GET /search\nrules:\n  - name: broken\n    respond: { status: 200, json: [1, 2 }\n")
        self.find("reload-submit").click()

        result = self.find("controls-result")
        self.wait_for(lambda: "search.yaml:4:" in result.text, "the problem is not shown")
        self.assertIn("error", result.get_attribute("class"))
        self.assertRegex(result.text, r"Error 422: .*\nscenarios/search\.yaml:4:\d+: YAML syntax")
        banner = self.wait_for(lambda: self.find("reload-problems").is_displayed() and self.find("reload-problems"), "no banner")
        self.assertRegex(banner.text, r"\nscenarios/search\.yaml:4:\d+: YAML syntax")
        self.find("tab-rules").click()
        self.assertTrue(banner.is_displayed())  # on every tab
        # The previous scenarios keep serving.
        self.assertEqual(self.mishap.request("/isUserNameAvailable?userName=someone")[0], 200)
        self.assertEqual(self.mishap.request("/search?q=swift")[0], 200)

        self.write_search(self.original)
        self.find("tab-controls").click()
        self.find("reload-submit").click()
        self.wait_for(lambda: '"reloaded":true' in result.text, "the good reload is not shown")
        self.wait_for(lambda: not banner.is_displayed(), "the banner stayed after a good reload")

    def test_rules_show_scenario_warnings(self):
        self.write_search(self.original + "  - name: neverAnswers\n    respond: { status: 418 }\n", reload=True)
        self.open_page("rules")
        warnings = self.wait_for(lambda: self.find("scenario-warnings").is_displayed() and self.find("scenario-warnings-list"), "no warnings shown")
        self.assertRegex(warnings.text, r"^scenarios/search\.yaml:\d+:\d+: warning: rule 'neverAnswers' of GET /search can never answer")
        self.wait_for(lambda: self.rule_row("GET /search", "neverAnswers"), "the rule that never answers is not listed")
        self.assertFalse(self.find("reload-problems").is_displayed())


class TokenTests(DashboardTestCase):
    """A Mishap with --admin-token: the page asks for it and sends it."""

    options = ("--admin-token", "dashboard-secret")

    def test_asks_for_the_token_then_shows_requests(self):
        session = new_session("token")
        self.mishap.request("/isUserNameAvailable?userName=someone", session=session)
        self.driver.get(self.mishap.url + "/__mishap/ui/")
        panel = self.find("token-panel")
        self.wait_for(panel.is_displayed, "the page did not ask for the token")
        self.assertEqual(self.rows(), [])

        self.find("token-input").send_keys("wrong")
        self.find("token-submit").click()
        self.wait_for(lambda: panel.is_displayed() and "refused" in self.find("token-message").text, "a wrong token was not refused")

        token_input = self.find("token-input")
        token_input.clear()
        token_input.send_keys("dashboard-secret")
        self.find("token-submit").click()
        self.wait_for(lambda: len(self.rows_of(session)) == 1, "no requests after the token was given")
        self.assertFalse(panel.is_displayed())
        self.assertEqual(self.driver.execute_script("return sessionStorage.getItem('mishap-admin-token')"), "dashboard-secret")
        # New requests keep coming (every call carries the token), also after a reload of the page.
        self.driver.refresh()
        self.mishap.request("/isUserNameAvailable?userName=servererror", session=session)
        self.wait_for(lambda: len(self.rows_of(session)) == 2, "polling with the token failed")
        self.assertFalse(self.find("token-panel").is_displayed())


if __name__ == "__main__":
    unittest.main()
