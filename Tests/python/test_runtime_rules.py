"""Mishap from a test runner in another language: Python's standard unittest, no packages.

What a pytest, JUnit or Jest suite does with Mishap, written with urllib only: each test takes
a session of its own on one shared server, sets its failures up at runtime through the admin API
(POST /__mishap/rules, /__mishap/force), points a small client at a base URL with the session in
its path (/__session/ID), and verifies what the client sent (requests/count, retries, unmatched).

Run by `make test`, against the debug build:  python3 -m unittest discover -s Tests/python -v
MISHAP_BIN names another binary.
"""

import json
import subprocess
import sys
import time
import unittest
import urllib.error
import urllib.parse
import urllib.request
import uuid
from concurrent.futures import ThreadPoolExecutor

from mishap_process import MishapProcess


class Mishap:
    """A `mishap serve` on a free port, for the whole test class."""

    def __init__(self):
        self.server = MishapProcess()
        self.url = self.server.url

    def stop(self):
        self.server.stop()

    def call(self, method, path, body=None, **query):
        """An admin call: (status, parsed JSON)."""
        target = self.url + "/__mishap/" + path
        if query:
            target += "?" + urllib.parse.urlencode(query)
        data = body.encode() if isinstance(body, str) else body
        request = urllib.request.Request(target, data=data, method=method)
        try:
            with urllib.request.urlopen(request, timeout=10) as response:
                return response.status, json.loads(response.read())
        except urllib.error.HTTPError as error:
            return error.code, json.loads(error.read())

    def session(self):
        return "py-" + uuid.uuid4().hex[:12]

    def base_url(self, session):
        return f"{self.url}/__session/{session}"


class UserNameClient:
    """The app's client under test: knows only its base URL, and retries a 5xx or 429 that
    says Retry-After (at most twice), waiting as long as asked."""

    def __init__(self, base_url):
        self.base_url = base_url

    def available(self, name):
        query = urllib.parse.urlencode({"userName": name})
        for attempt in range(3):
            try:
                with urllib.request.urlopen(f"{self.base_url}/isUserNameAvailable?{query}", timeout=10) as response:
                    return response.status, json.loads(response.read())
            except urllib.error.HTTPError as error:
                retry_after = error.headers.get("Retry-After")
                if attempt < 2 and retry_after is not None and (error.code >= 500 or error.code == 429):
                    time.sleep(float(retry_after))
                    continue
                return error.code, json.loads(error.read() or b"null")


class RuntimeRulesFromPython(unittest.TestCase):
    @classmethod
    def setUpClass(cls):
        cls.mishap = Mishap()

    @classmethod
    def tearDownClass(cls):
        cls.mishap.stop()

    def test_session_rules_answer_only_that_session_and_disappear(self):
        session = self.mishap.session()
        rules = "endpoint: GET /isUserNameAvailable\nrules:\n  - name: closed\n    respond: { status: 403, json: { reason: closed } }\n"
        status, added = self.mishap.call("POST", "rules", rules, session=session, times=2)
        self.assertEqual(status, 201, added)
        client = UserNameClient(self.mishap.base_url(session))
        self.assertEqual([client.available("someone")[0] for _ in range(3)], [403, 403, 200])
        self.assertEqual(UserNameClient(self.mishap.url).available("someone")[0], 200, "other clients are untouched")
        status, count = self.mishap.call("GET", "requests/count", session=session, rule="closed")
        self.assertEqual((status, count["count"]), (200, 2))
        status, listed = self.mishap.call("GET", "rules", session=session)
        self.assertEqual(listed["rules"], [], "used up after two answers")

    def test_the_client_honours_retry_after(self):
        session = self.mishap.session()
        rules = ("endpoint: GET /isUserNameAvailable\nrules:\n  - name: busy\n"
                 "    respond: { status: 503, headers: { Retry-After: \"1\" }, json: { reason: busy } }\n")
        self.assertEqual(self.mishap.call("POST", "rules", rules, session=session, times=2)[0], 201)
        status, body = UserNameClient(self.mishap.base_url(session)).available("someone")
        self.assertEqual((status, body["isAvailable"]), (200, True))
        status, retries = self.mishap.call("GET", "retries", session=session)
        self.assertEqual(retries["violations"], 0, retries)
        self.assertEqual([r["honoured"] for r in retries["retries"]], [True, True])

    def test_forcing_a_file_rule(self):
        session = self.mishap.session()
        status, added = self.mishap.call("POST", "force", endpoint="GET /isUserNameAvailable", rule="servererror",
                                         session=session, times=1)
        self.assertEqual(status, 201, added)
        client = UserNameClient(self.mishap.base_url(session))
        self.assertEqual(client.available("someone"), (500, {"error": True, "reason": "The database is corrupted"}))
        self.assertEqual(client.available("someone")[0], 200)

    def test_parallel_sessions_do_not_collide(self):
        def one(index):
            session = self.mishap.session()
            rules = (f"endpoint: GET /isUserNameAvailable\nrules:\n  - name: mine\n"
                     f"    respond: {{ status: 418, json: {{ index: {index} }} }}\n")
            self.assertEqual(self.mishap.call("POST", "rules", rules, session=session)[0], 201)
            answers = [UserNameClient(self.mishap.base_url(session)).available("someone") for _ in range(3)]
            return index, answers

        with ThreadPoolExecutor(max_workers=8) as pool:
            for index, answers in pool.map(one, range(16)):
                self.assertEqual(answers, [(418, {"index": index})] * 3)

    def test_mistakes_are_located_and_refused(self):
        status, answer = self.mishap.call("POST", "rules", "endpoint: GET /x\nrules:\n  - name: a\n    respond: { stauts: 500 }\n")
        self.assertEqual(status, 422)
        self.assertTrue(answer["problems"][0].startswith("body:4:16: unknown key 'stauts'"), answer)
        self.assertEqual(self.mishap.call("POST", "rules", "endpoint: GET /x\n", times=0)[0], 400)
        self.assertEqual(self.mishap.call("DELETE", "rules/r999999")[0], 404)

    def test_unmatched_requests_say_what_nearly_matched(self):
        session = self.mishap.session()
        rules = "endpoint: GET /orders\nrules:\n  - name: open\n    when: { query: { state: [open, pending] } }\n    respond: { json: [] }\n"
        self.assertEqual(self.mishap.call("POST", "rules", rules, session=session)[0], 201)
        with self.assertRaises(urllib.error.HTTPError) as refused:
            urllib.request.urlopen(self.mishap.base_url(session) + "/orders?state=opne", timeout=10)
        self.assertEqual(refused.exception.code, 404)
        status, unmatched = self.mishap.call("GET", "unmatched", session=session)
        reason = unmatched["unmatched"][0]["nearMisses"][0]["reason"]
        self.assertEqual(reason, 'query state: expected one of [open, pending], got "opne"')

    def test_a_separate_process_given_only_a_base_url(self):
        """What a UI test does: the app runs in another process and knows only its base URL."""
        session = self.mishap.session()
        self.assertEqual(self.mishap.call("POST", "force", endpoint="GET /isUserNameAvailable", rule="maintenance!",
                                          session=session, times=1)[0], 201)
        app = ("import sys, urllib.request, urllib.error\n"
               "def get(url):\n"
               "    try:\n"
               "        return urllib.request.urlopen(url, timeout=10).status\n"
               "    except urllib.error.HTTPError as e:\n"
               "        return e.code\n"
               "print(get(sys.argv[1] + '/isUserNameAvailable?userName=someone'), get(sys.argv[1] + '/isUserNameAvailable?userName=someone'))\n")
        output = subprocess.run([sys.executable, "-c", app, self.mishap.base_url(session)], capture_output=True, text=True, timeout=30)
        self.assertEqual(output.stdout.split(), ["500", "200"], output.stderr)
        status, journal = self.mishap.call("GET", "requests", session=session)
        self.assertEqual([r["rule"] for r in journal["requests"]], ["maintenanceForever", "available"])
        self.assertTrue(all(r["path"] == "/isUserNameAvailable" for r in journal["requests"]))


if __name__ == "__main__":
    unittest.main()
