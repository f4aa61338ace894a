"""Network profiles per session from Python's standard library (urllib, unittest, no packages).

One `mishap serve --seed 11` for the class; each test takes sessions of its own: one on a slow
network and one not, in parallel (the unshaped one as fast as before); loss at a seeded fraction;
offline for a while, then back; a bad profile refused with 422 naming its key.

Run by `make test`:  python3 -m unittest discover -s Tests/python -v   (MISHAP_BIN: another binary)
"""

import json
import time
import unittest
import urllib.error
import urllib.request
import uuid
from concurrent.futures import ThreadPoolExecutor

from mishap_process import DEFAULT_SCENARIOS, MishapProcess


class NetworkTests(unittest.TestCase):
    @classmethod
    def setUpClass(cls):
        cls.mishap = MishapProcess(DEFAULT_SCENARIOS, "--seed", "11")
        cls.url = cls.mishap.url

    @classmethod
    def tearDownClass(cls):
        cls.mishap.stop()

    def put_network(self, session, profile, expect=200):
        request = urllib.request.Request(f"{self.url}/__mishap/network?session={session}", method="PUT",
                                         data=json.dumps(profile).encode(), headers={"Content-Type": "application/json"})
        try:
            with urllib.request.urlopen(request, timeout=10) as response:
                self.assertEqual(response.status, expect)
                return json.load(response)
        except urllib.error.HTTPError as error:
            self.assertEqual(error.code, expect)
            return json.load(error)

    def get(self, session, timeout=15):
        """Seconds a GET took, and its status (None: the connection was reset)."""
        request = urllib.request.Request(f"{self.url}/isUserNameAvailable?userName=alice",
                                         headers={"X-Mishap-Session": session})
        start = time.monotonic()
        try:
            with urllib.request.urlopen(request, timeout=timeout) as response:
                response.read()
                return time.monotonic() - start, response.status
        except (ConnectionError, urllib.error.URLError, OSError) as error:
            if isinstance(error, urllib.error.HTTPError):
                return time.monotonic() - start, error.code
            return time.monotonic() - start, None

    def test_one_session_shaped_and_one_not(self):
        slow, fast = f"slow-{uuid.uuid4().hex[:8]}", f"fast-{uuid.uuid4().hex[:8]}"
        alone, _ = self.get(fast)
        answer = self.put_network(slow, {"latency": "2s"})
        self.assertEqual(answer["network"]["latency"], "2000ms")
        with ThreadPoolExecutor(2) as pool:
            shaped, unshaped = pool.submit(self.get, slow), pool.submit(self.get, fast)
            (slow_seconds, slow_status), (fast_seconds, fast_status) = shaped.result(), unshaped.result()
        self.assertEqual((slow_status, fast_status), (200, 200))
        self.assertGreaterEqual(slow_seconds, 1.95)
        self.assertLess(fast_seconds + 1, slow_seconds, f"alone it took {alone:.3f} s")

    def test_loss_at_a_seeded_fraction(self):
        session = f"lossy-{uuid.uuid4().hex[:8]}"
        self.put_network(session, {"loss": 0.5})
        resets = sum(1 for _ in range(40) if self.get(session)[1] is None)
        self.assertTrue(10 <= resets <= 30, f"{resets} of 40 reset")

    def test_offline_then_back(self):
        session = f"tunnel-{uuid.uuid4().hex[:8]}"
        self.put_network(session, {"offline": "3s"})
        _, status = self.get(session)
        self.assertIsNone(status)
        time.sleep(3.2)
        self.assertEqual(self.get(session)[1], 200)

    def test_a_bad_profile_names_its_key(self):
        answer = self.put_network(f"bad-{uuid.uuid4().hex[:8]}", {"latency": "soon"}, expect=422)
        self.assertIn("latency", answer["reason"])
        self.assertRegex(answer["reason"], r":\d+:\d+")


if __name__ == "__main__":
    unittest.main()
