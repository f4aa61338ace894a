"""The verdict (GET /__mishap/verdict) judging real clients: urllib3's Retry, a retry library of
the field, set up as honest and dishonest clients are, and small urllib clients, each test in a
session of its own on one shared server. Every check is shown passing the honest client and
failing the dishonest one.

Run by `make test`:  python3 -m unittest discover -s Tests/python -v
"""

import json
import time
import unittest
import urllib.error
import urllib.request
import uuid

import urllib3
from urllib3.util import Retry, Timeout

from test_runtime_rules import Mishap


def cycle(*answers):
    """A runtime rule for GET /feed whose answers come in turn (per session), then repeat."""
    lines = "\n".join(f"      - {answer}" for answer in answers)
    return f"endpoint: GET /feed\nrules:\n  - name: feed\n    cycle:\n{lines}\n"


class VerdictOfRealClients(unittest.TestCase):
    @classmethod
    def setUpClass(cls):
        cls.mishap = Mishap()

    @classmethod
    def tearDownClass(cls):
        cls.mishap.stop()

    def setUp(self):
        self.session = self.mishap.session()

    def rules(self, yaml):
        status, added = self.mishap.call("POST", "rules", yaml, session=self.session)
        self.assertEqual(status, 201, added)

    def verdict(self, **query):
        status, verdict = self.mishap.call("GET", "verdict", session=self.session, **query)
        self.assertEqual(status, 200, verdict)
        self.assertEqual([check["name"] for check in verdict["checks"]],
                         ["retryAfter", "backoff", "attemptBudget", "unsafeRetry", "clientErrorRetry", "oneRefresh", "giveUp",
                          "reconnect"])
        return verdict

    def check(self, name, **query):
        verdict = self.verdict(**query)
        found = next(check for check in verdict["checks"] if check["name"] == name)
        # The overall verdict is false exactly when a check is.
        self.assertEqual(verdict["passed"], all(check["passed"] is not False for check in verdict["checks"]), verdict)
        return found

    def pool(self, retries, timeout=10):
        return urllib3.PoolManager(retries=retries, timeout=timeout, headers={"X-Mishap-Session": self.session})

    def get(self, pool, path="/feed"):
        try:
            return pool.request("GET", self.mishap.url + path).status
        except urllib3.exceptions.MaxRetryError as error:
            return type(error.reason).__name__

    # retryAfter

    def test_retry_after_honoured_by_urllib3_and_not_by_a_fixed_pause(self):
        self.rules(cycle('{ status: 503, headers: { Retry-After: "1" } }', "{ status: 200 }"))
        pool = self.pool(Retry(total=3, status_forcelist=[503], respect_retry_after_header=True))
        self.assertEqual(self.get(pool), 200)
        check = self.check("retryAfter")
        self.assertIs(check["passed"], True, check)
        self.assertGreaterEqual(check["evidence"][0]["waitedMs"], 1000)

        # The seed article's client: whatever the server says, it tries again after a fixed pause.
        self.session = self.mishap.session()
        self.rules(cycle('{ status: 503, headers: { Retry-After: "2" } }', "{ status: 200 }"))
        statuses = []
        for _ in range(2):
            statuses.append(self.get(self.pool(Retry(total=0, raise_on_status=False))))
            time.sleep(0.3)
        self.assertEqual(statuses, [503, 200])
        check = self.check("retryAfter")
        self.assertIs(check["passed"], False, check)
        self.assertIn("early", check["summary"])

    def test_a_retry_after_let_pass_by_moving_the_clock_was_waited(self):
        self.rules(cycle('{ status: 503, headers: { Retry-After: "30" } }', "{ status: 200 }"))
        pool = self.pool(Retry(total=0, raise_on_status=False))
        self.assertEqual(self.get(pool), 503)
        status, clock = self.mishap.call("POST", "clock", session=self.session, advance="31s")
        self.assertEqual((status, clock["offsetMs"]), (200, 31000), clock)
        self.assertEqual(self.get(pool), 200)
        check = self.check("retryAfter")
        self.assertIs(check["passed"], True, check)
        self.assertGreaterEqual(check["evidence"][0]["waitedMs"], 31000)

    # backoff

    def test_backoff_passes_exponential_waits_and_fails_immediate_retries(self):
        failing = cycle(*["{ status: 503 }"] * 4, "{ status: 200 }")
        self.rules(failing)
        self.assertEqual(self.get(self.pool(Retry(total=4, status_forcelist=[503], backoff_factor=0.1))), 200)
        check = self.check("backoff")
        self.assertIs(check["passed"], True, check)
        self.assertEqual(len(check["evidence"]), 5)
        self.assertGreater(check["details"]["growth"], 1.5)

        self.session = self.mishap.session()
        self.rules(failing)
        self.assertEqual(self.get(self.pool(Retry(total=4, status_forcelist=[503], backoff_factor=0))), 200)
        check = self.check("backoff")
        self.assertIs(check["passed"], False, check)
        self.assertIn("GET /feed", check["summary"])

    # attemptBudget

    def test_attempt_budget(self):
        self.rules(cycle("{ status: 503 }"))
        self.assertEqual(self.get(self.pool(Retry(total=2, status_forcelist=[503], raise_on_status=False))), 503)
        check = self.check("attemptBudget")
        self.assertIs(check["passed"], True, check)
        self.assertEqual(check["details"]["mostAttempts"], 3)

        self.session = self.mishap.session()
        self.rules(cycle("{ status: 503 }"))
        self.assertEqual(self.get(self.pool(Retry(total=9, status_forcelist=[503], raise_on_status=False))), 503)
        check = self.check("attemptBudget")
        self.assertIs(check["passed"], False, check)
        self.assertIn("10 attempts", check["summary"])
        # The test sets the budget.
        self.assertIs(self.check("attemptBudget", maxAttempts=10)["passed"], True)
        status, problem = self.mishap.call("GET", "verdict", session=self.session, maxAttempts="0")
        self.assertEqual(status, 400, problem)
        self.assertIn("maxAttempts", problem["reason"])

    # unsafeRetry

    def order(self, key=None):
        """A POST /orders with urllib3 told to retry every method after a broken connection."""
        # Headers given to a request replace the pool's: the session's is given again.
        headers = {"Content-Type": "application/json", "X-Mishap-Session": self.session}
        if key is not None:
            headers["Idempotency-Key"] = key
        pool = self.pool(Retry(total=2, read=2, allowed_methods=None, backoff_factor=0.01))
        try:
            return pool.request("POST", self.mishap.url + "/orders", body=b'{"item": 1}', headers=headers).status
        except urllib3.exceptions.MaxRetryError as error:
            return type(error.reason).__name__

    def orders(self):
        self.rules("endpoint: POST /orders\nrules:\n  - name: orders\n    cycle:\n"
                   "      - { fault: reset }\n      - { status: 201, json: { id: 1 } }\n")

    def test_a_post_whose_fate_is_unknown_is_not_retried_without_its_idempotency_key(self):
        self.orders()
        self.assertEqual(self.order(), 201)
        check = self.check("unsafeRetry")
        self.assertIs(check["passed"], False, check)
        self.assertIn("without an Idempotency-Key", check["summary"])

        self.session = self.mishap.session()
        self.orders()
        self.assertEqual(self.order(key=str(uuid.uuid4())), 201)
        check = self.check("unsafeRetry")
        self.assertIs(check["passed"], True, check)

        # urllib3 as it comes does not retry a POST: the fate stays unknown, and that is right.
        self.session = self.mishap.session()
        self.orders()
        pool = self.pool(Retry(total=2))
        with self.assertRaises(urllib3.exceptions.ProtocolError):
            pool.request("POST", self.mishap.url + "/orders", body=b'{"item": 1}', headers={"X-Mishap-Session": self.session})
        check = self.check("unsafeRetry")
        self.assertIs(check["passed"], True, check)
        self.assertIn("not sent again", check["evidence"][0]["note"])

    # clientErrorRetry

    def test_a_client_error_is_not_retried_unchanged(self):
        self.rules(cycle("{ status: 400, json: { reason: bad } }"))
        self.assertEqual(self.get(self.pool(Retry(total=2, raise_on_status=False))), 400)
        self.assertIs(self.check("clientErrorRetry")["passed"], True)

        self.session = self.mishap.session()
        self.rules(cycle("{ status: 400, json: { reason: bad } }"))
        self.assertEqual(self.get(self.pool(Retry(total=2, status_forcelist=[400], raise_on_status=False))), 400)
        check = self.check("clientErrorRetry")
        self.assertIs(check["passed"], False, check)
        self.assertIn("sent again unchanged after 400", check["summary"])

    # giveUp

    def test_a_client_gives_up_on_a_hang_within_the_limit(self):
        self.rules(cycle("{ hang: true }"))
        self.assertEqual(self.get(self.pool(Retry(total=0), timeout=Timeout(connect=2, read=0.3))), "ReadTimeoutError")
        check = self.wait_for_check("giveUp", giveUpWithin="2s")
        self.assertIs(check["passed"], True, check)
        self.assertGreaterEqual(check["evidence"][0]["waitedMs"], 250)

        self.session = self.mishap.session()
        self.rules(cycle("{ hang: true }"))
        self.assertEqual(self.get(self.pool(Retry(total=0), timeout=Timeout(connect=2, read=1.2))), "ReadTimeoutError")
        check = self.wait_for_check("giveUp", giveUpWithin="500ms")
        self.assertIs(check["passed"], False, check)
        self.assertIn("past the limit of 500 ms", check["summary"])

    def wait_for_check(self, name, **query):
        """The check once the server has seen the client close (it notices within moments)."""
        deadline = time.monotonic() + 5
        while True:
            check = self.check(name, **query)
            if check["passed"] is not None or time.monotonic() > deadline:
                return check
            time.sleep(0.05)

    # the verdict as a whole

    def test_nothing_to_judge_and_other_sessions_apart(self):
        verdict = self.verdict()
        self.assertIs(verdict["passed"], True)
        self.assertEqual(verdict["attempts"], 0)
        self.assertTrue(all(check["passed"] is None for check in verdict["checks"]), verdict)
        self.rules(cycle("{ status: 400 }"))
        pool = self.pool(Retry(total=2, status_forcelist=[400], raise_on_status=False))
        self.get(pool)
        self.assertIs(self.verdict()["passed"], False)
        # Another session's verdict knows nothing of it; a reset of the session forgets it.
        other = self.mishap.call("GET", "verdict", session=self.mishap.session())[1]
        self.assertEqual(other["attempts"], 0)
        self.assertEqual(self.mishap.call("POST", "reset", session=self.session)[0], 200)
        self.assertEqual(self.verdict()["attempts"], 0)
        status, problem = self.mishap.call("GET", "verdict", session=self.session, giveUpWithin="soon")
        self.assertEqual(status, 400, problem)
        status, problem = self.mishap.call("GET", "verdict", sesion=self.session)
        self.assertEqual(status, 400, problem)


if __name__ == "__main__":
    unittest.main()
