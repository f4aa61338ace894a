"""HTTPS and the TLS failure catalogue, seen by real TLS clients: Python's ssl module and curl,
both on OpenSSL, trusting only Mishap's local certificate authority.

Each failure's port must fail the handshake exactly as the catalogue says; the HTTPS port must
pass with the authority trusted and fail without it, and then serve the scenarios, the journal
and the admin API as plain HTTP does. Run by `make test` (python3 -m unittest discover -s
Tests/python -v); MISHAP_BIN names another binary.
"""

import base64
import http.client
import json
import os
import re
import shutil
import socket
import ssl
import stat
import subprocess
import tempfile
import threading
import time
import unittest
import urllib.error
import urllib.parse
import urllib.request
import warnings

REPO = os.path.dirname(os.path.dirname(os.path.dirname(os.path.abspath(__file__))))
MISHAP = os.environ.get("MISHAP_BIN", os.path.join(REPO, ".build", "debug", "mishap"))


class SecureMishap:
    """`mishap serve --tls-port 0` with a certificate authority in a folder of its own."""

    def __init__(self, folder, *extra):
        self.folder = folder
        self.process = subprocess.Popen(
            [MISHAP, "serve", "--port", "0", "--tls-port", "0", "--tls-dir", folder,
             "--scenarios", os.path.join(REPO, "scenarios"), "--log-level", "warning", *extra],
            stdout=subprocess.PIPE, stderr=subprocess.PIPE, text=True)
        first = self.process.stdout.readline()
        match = re.search(r"listening on (http://\S+)", first)
        if not match:
            self.process.kill()
            raise RuntimeError(f"mishap did not start: {first!r} {self.process.stderr.read()!r}")
        self.url = match.group(1)
        second = self.process.stdout.readline()
        match = re.search(r"listening on (https://\S+) \(pin (sha256/\S+)\)", second)
        if not match:
            self.process.kill()
            raise RuntimeError(f"no HTTPS line: {second!r}")
        self.https, self.pin = match.group(1), match.group(2)
        self.catalogue = {}
        for _ in range(0 if "--no-tls-catalogue" in extra else 10):
            line = self.process.stdout.readline()
            match = re.match(r"mishap TLS failure (\S+) at (https://\S+): ", line)
            if not match:
                self.process.kill()
                raise RuntimeError(f"not a catalogue line: {line!r}")
            self.catalogue[match.group(1)] = match.group(2)
        self.readers = [threading.Thread(target=stream.read, daemon=True) for stream in (self.process.stdout, self.process.stderr)]
        for reader in self.readers:
            reader.start()

    def stop(self):
        self.process.terminate()
        self.process.wait(timeout=15)
        for reader in self.readers:
            reader.join(timeout=5)
        self.process.stdout.close()
        self.process.stderr.close()

    @property
    def ca(self):
        return os.path.join(self.folder, "ca.pem")


def handshake(url, cafile, timeout=3.0):
    """Connects with Python's ssl, trusting only `cafile` (None: the system's authorities), and
    returns the negotiated version, or raises what the handshake raised."""
    parts = urllib.parse.urlparse(url)
    context = ssl.create_default_context(cafile=cafile) if cafile else ssl.create_default_context()
    with socket.create_connection((parts.hostname, parts.port), timeout=timeout) as raw:
        with context.wrap_socket(raw, server_hostname=parts.hostname) as tls:
            return tls.version(), tls.getpeercert(binary_form=True)


def get(url, cafile):
    """A GET over HTTPS with urllib: (status, body bytes, headers)."""
    context = ssl.create_default_context(cafile=cafile)
    try:
        with urllib.request.urlopen(url, context=context, timeout=10) as response:
            return response.status, response.read(), response.headers
    except urllib.error.HTTPError as error:
        return error.code, error.read(), error.headers


class TLSCatalogueTests(unittest.TestCase):
    @classmethod
    def setUpClass(cls):
        cls.folder = tempfile.mkdtemp(prefix="mishap-tls-")
        cls.mishap = SecureMishap(os.path.join(cls.folder, "ca"))

    @classmethod
    def tearDownClass(cls):
        cls.mishap.stop()
        shutil.rmtree(cls.folder, ignore_errors=True)

    def expect_verify_failure(self, name, words):
        with self.assertRaises(ssl.SSLCertVerificationError) as raised:
            handshake(self.mishap.catalogue[name], self.mishap.ca)
        self.assertIn(words, str(raised.exception), name)

    def test_the_https_port_passes_with_the_authority_and_fails_without_it(self):
        version, _ = handshake(self.mishap.https, self.mishap.ca)
        self.assertIn(version, ("TLSv1.2", "TLSv1.3"))
        with self.assertRaises(ssl.SSLCertVerificationError) as raised:
            handshake(self.mishap.https, None)
        self.assertIn("unable to get local issuer certificate", str(raised.exception))

    def test_the_server_certificate_names_localhost_and_the_loopback_addresses(self):
        localhost = self.mishap.https.replace("127.0.0.1", "localhost")
        self.assertIn(handshake(localhost, self.mishap.ca)[0], ("TLSv1.2", "TLSv1.3"))
        pem = ssl.DER_cert_to_PEM_cert(handshake(self.mishap.https, self.mishap.ca)[1])
        text = subprocess.run(["openssl", "x509", "-noout", "-ext", "subjectAltName"], input=pem,
                              capture_output=True, text=True).stdout if shutil.which("openssl") else ""
        if text:
            for name in ("DNS:localhost", "IP Address:127.0.0.1", "IP Address:0:0:0:0:0:0:0:1"):
                self.assertIn(name, text)

    def test_expired(self):
        self.expect_verify_failure("expired", "certificate has expired")

    def test_not_yet_valid(self):
        self.expect_verify_failure("not-yet-valid", "certificate is not yet valid")

    def test_wrong_host(self):
        self.expect_verify_failure("wrong-host", "IP address mismatch")
        with self.assertRaises(ssl.SSLCertVerificationError) as raised:
            handshake(self.mishap.catalogue["wrong-host"].replace("127.0.0.1", "localhost"), self.mishap.ca)
        self.assertIn("Hostname mismatch", str(raised.exception))

    def test_self_signed(self):
        self.expect_verify_failure("self-signed", "self-signed certificate")

    def test_untrusted_root(self):
        self.expect_verify_failure("untrusted-root", "unable to get local issuer certificate")

    def test_incomplete_chain(self):
        self.expect_verify_failure("incomplete-chain", "unable to get local issuer certificate")

    def test_pin_mismatch_passes_the_handshake_with_another_key(self):
        _, der = handshake(self.mishap.catalogue["pin-mismatch"], self.mishap.ca)
        _, good = handshake(self.mishap.https, self.mishap.ca)
        self.assertEqual(spki_pin(good), self.mishap.pin)
        self.assertNotEqual(spki_pin(der), self.mishap.pin)

    def test_old_protocol_fails_the_handshake(self):
        with self.assertRaises((ssl.SSLError, ConnectionResetError)) as raised:
            handshake(self.mishap.catalogue["old-protocol"], self.mishap.ca)
        self.assertNotIsInstance(raised.exception, ssl.SSLCertVerificationError)
        # A client that still offers TLS 1.0 (here Python with its floor lowered) gets it.
        context = ssl.SSLContext(ssl.PROTOCOL_TLS_CLIENT)
        context.load_verify_locations(self.mishap.ca)
        with warnings.catch_warnings():
            warnings.simplefilter("ignore", DeprecationWarning)
            context.minimum_version = ssl.TLSVersion.TLSv1
        context.set_ciphers("DEFAULT:@SECLEVEL=0")
        parts = urllib.parse.urlparse(self.mishap.catalogue["old-protocol"])
        try:
            with socket.create_connection((parts.hostname, parts.port), timeout=3) as raw:
                with context.wrap_socket(raw, server_hostname=parts.hostname) as tls:
                    self.assertIn(tls.version(), ("TLSv1", "TLSv1.1"))
        except ssl.SSLError as error:
            # This OpenSSL cannot speak TLS 1.0/1.1 at all: it still refused, not the server.
            self.assertRegex(str(error), "(?i)protocol|sigalg|no ciphers")

    def test_handshake_reset(self):
        with self.assertRaises(ConnectionResetError):
            handshake(self.mishap.catalogue["handshake-reset"], self.mishap.ca)

    def test_handshake_stall(self):
        started = time.monotonic()
        with self.assertRaises((TimeoutError, socket.timeout)):
            handshake(self.mishap.catalogue["handshake-stall"], self.mishap.ca, timeout=1.0)
        self.assertGreaterEqual(time.monotonic() - started, 0.9)

    @unittest.skipUnless(shutil.which("curl"), "curl is not installed")
    def test_curl_reports_each_failure(self):
        expected = {
            "expired": "certificate has expired",
            "not-yet-valid": "certificate is not yet valid",
            "wrong-host": "no alternative certificate subject name matches",
            "self-signed": "self-signed certificate",
            "untrusted-root": "unable to get local issuer certificate",
            "incomplete-chain": "unable to get local issuer certificate",
            "handshake-reset": "Connection reset by peer",
            "handshake-stall": "timed out",
        }
        for name, words in expected.items():
            result = subprocess.run(["curl", "-sS", "--max-time", "2", "--cacert", self.mishap.ca,
                                     self.mishap.catalogue[name] + "/isUserNameAvailable?userName=someone"],
                                    capture_output=True, text=True)
            self.assertNotEqual(result.returncode, 0, name)
            self.assertIn(words, result.stderr, name)
        for name in ("pin-mismatch",):
            result = subprocess.run(["curl", "-sS", "--max-time", "5", "--cacert", self.mishap.ca,
                                     self.mishap.catalogue[name] + "/isUserNameAvailable?userName=someone"],
                                    capture_output=True, text=True)
            self.assertEqual(json.loads(result.stdout), {"isAvailable": True, "userName": "someone"})
        # The pin curl checks (--pinnedpubkey) is the one printed: right on the HTTPS port, wrong on pin-mismatch.
        pinned = self.mishap.pin.replace("sha256/", "sha256//")
        good = subprocess.run(["curl", "-sS", "--max-time", "5", "--cacert", self.mishap.ca, "--pinnedpubkey", pinned,
                               self.mishap.https + "/isUserNameAvailable?userName=someone"], capture_output=True, text=True)
        self.assertEqual(good.returncode, 0, good.stderr)
        bad = subprocess.run(["curl", "-sS", "--max-time", "5", "--cacert", self.mishap.ca, "--pinnedpubkey", pinned,
                              self.mishap.catalogue["pin-mismatch"] + "/isUserNameAvailable?userName=someone"],
                             capture_output=True, text=True)
        self.assertEqual(bad.returncode, 90, bad.stderr)  # CURLE_SSL_PINNEDPUBKEYNOTMATCH

    def test_the_https_port_serves_the_scenarios_and_the_admin_api(self):
        status, body, _ = get(self.mishap.https + "/isUserNameAvailable?userName=someone", self.mishap.ca)
        self.assertEqual((status, json.loads(body)), (200, {"isAvailable": True, "userName": "someone"}))
        status, body, headers = get(self.mishap.https + "/isUserNameAvailable?userName=maintenance", self.mishap.ca)
        self.assertEqual(status, 500)
        # Sessions in the path, the journal and the admin API work over TLS as over HTTP.
        session = "tls-" + str(os.getpid())
        get(f"{self.mishap.https}/__session/{session}/isUserNameAvailable?userName=someone", self.mishap.ca)
        status, body, _ = get(f"{self.mishap.https}/__mishap/requests/count?session={session}", self.mishap.ca)
        self.assertEqual((status, json.loads(body)["count"]), (200, 1))
        status, body, _ = get(self.mishap.https + "/__mishap/tls", self.mishap.ca)
        listing = json.loads(body)
        self.assertEqual(status, 200)
        self.assertEqual(listing["url"], self.mishap.https)
        self.assertEqual(listing["pin"], self.mishap.pin)
        self.assertEqual(listing["caCertificate"], self.mishap.ca)
        self.assertEqual([entry["name"] for entry in listing["failures"]], list(self.mishap.catalogue))
        self.assertEqual({entry["name"]: entry["url"] for entry in listing["failures"]}, self.mishap.catalogue)
        # Over plain HTTP too.
        with urllib.request.urlopen(self.mishap.url + "/__mishap/tls", timeout=10) as response:
            self.assertEqual(json.loads(response.read())["url"], self.mishap.https)


def http_client_errors():
    """What urllib raises when a TLS server answers plain HTTP with TLS bytes."""
    return http.client.HTTPException


class OverTLSTests(unittest.TestCase):
    """Faults, delays, hangs, cycles and sessions over HTTPS behave as over HTTP."""

    @classmethod
    def setUpClass(cls):
        cls.folder = tempfile.mkdtemp(prefix="mishap-tls-")
        cls.mishap = SecureMishap(os.path.join(cls.folder, "ca"), "--no-tls-catalogue")

    @classmethod
    def tearDownClass(cls):
        cls.mishap.stop()
        shutil.rmtree(cls.folder, ignore_errors=True)

    def fetch(self, base, user, session=None, timeout=10):
        """(status, body) of GET /isUserNameAvailable over `base` with http.client, or raises."""
        parts = urllib.parse.urlparse(base)
        if parts.scheme == "https":
            context = ssl.create_default_context(cafile=self.mishap.ca)
            connection = http.client.HTTPSConnection(parts.hostname, parts.port, timeout=timeout, context=context)
        else:
            connection = http.client.HTTPConnection(parts.hostname, parts.port, timeout=timeout)
        headers = {"X-Mishap-Session": session} if session else {}
        try:
            connection.request("GET", f"/isUserNameAvailable?userName={user}", headers=headers)
            response = connection.getresponse()
            return response.status, response.read()
        finally:
            connection.close()

    def test_a_delay_is_kept(self):
        started = time.monotonic()
        status, body = self.fetch(self.mishap.https, "slowpoke")
        self.assertEqual(status, 200)
        self.assertGreaterEqual(time.monotonic() - started, 1.45)

    def test_a_hang_never_answers(self):
        with self.assertRaises((TimeoutError, socket.timeout)):
            self.fetch(self.mishap.https, "timeout", timeout=1)

    def test_a_reset_is_a_reset(self):
        with self.assertRaises(ConnectionResetError):
            self.fetch(self.mishap.https, "reset")

    def test_a_dropped_connection_has_no_answer(self):
        with self.assertRaises((http.client.RemoteDisconnected, ssl.SSLError, ConnectionResetError)):
            self.fetch(self.mishap.https, "dropped")

    def test_a_truncated_body_is_incomplete(self):
        with self.assertRaises(http.client.IncompleteRead):
            self.fetch(self.mishap.https, "truncated")

    def test_cycles_and_sessions_run_as_over_http(self):
        over_https = [self.fetch(self.mishap.https, "maintenance", session="tls-cycle")[0] for _ in range(4)]
        over_http = [self.fetch(self.mishap.url, "maintenance", session="http-cycle")[0] for _ in range(4)]
        self.assertEqual(over_https, over_http)
        self.assertIn(500, over_https)
        # The journal saw the HTTPS session's requests, as any others.
        with urllib.request.urlopen(self.mishap.url + "/__mishap/requests/count?session=tls-cycle", timeout=10) as response:
            self.assertEqual(json.loads(response.read())["count"], 4)
        # And the Retry-After check: the second request came straight after a 500 asking for 17 s.
        status, body, _ = get(self.mishap.https + "/__mishap/retries?session=tls-cycle", self.mishap.ca)
        retries = json.loads(body)
        self.assertEqual(status, 200)
        self.assertGreaterEqual(retries["violations"], 1)
        self.assertEqual(retries["retries"][0]["retryAfter"], "17")
        self.assertFalse(retries["retries"][0]["honoured"])


def spki_pin(der):
    """sha256/ and the Base64 SHA-256 of a DER certificate's SubjectPublicKeyInfo, with openssl."""
    if not shutil.which("openssl"):
        raise unittest.SkipTest("openssl is not installed")
    pem = ssl.DER_cert_to_PEM_cert(der)
    key = subprocess.run(["openssl", "x509", "-noout", "-pubkey"], input=pem, capture_output=True, text=True, check=True).stdout
    spki = subprocess.run(["openssl", "pkey", "-pubin", "-outform", "DER"], input=key.encode(), capture_output=True, check=True).stdout
    digest = subprocess.run(["openssl", "dgst", "-sha256", "-binary"], input=spki, capture_output=True, check=True).stdout
    return "sha256/" + base64.b64encode(digest).decode()


class CertificateAuthorityTests(unittest.TestCase):
    def setUp(self):
        self.folder = tempfile.mkdtemp(prefix="mishap-tls-")

    def tearDown(self):
        shutil.rmtree(self.folder, ignore_errors=True)

    def run_mishap(self, *arguments):
        return subprocess.run([MISHAP, *arguments], capture_output=True, text=True, timeout=30)

    def test_init_makes_private_keys_0600_and_refuses_a_second_time(self):
        folder = os.path.join(self.folder, "nested", "ca")
        made = self.run_mishap("tls", "init", "--dir", folder)
        self.assertEqual(made.returncode, 0, made.stderr)
        for name, mode in (("ca.pem", 0o644), ("ca-key.pem", 0o600), ("server-key.pem", 0o600)):
            self.assertEqual(stat.S_IMODE(os.stat(os.path.join(folder, name)).st_mode), mode, name)
        self.assertEqual(stat.S_IMODE(os.stat(folder).st_mode), 0o700)
        with open(os.path.join(folder, "ca-key.pem")) as key:
            secret = key.read()
        self.assertNotIn(secret.splitlines()[1], made.stdout + made.stderr)
        again = self.run_mishap("tls", "init", "--dir", folder)
        self.assertEqual(again.returncode, 1)
        self.assertIn("already holds a certificate authority", again.stderr)
        with open(os.path.join(folder, "ca-key.pem")) as key:
            self.assertEqual(key.read(), secret)

    def test_trust_prints_the_steps_and_the_pin_serve_prints(self):
        self.assertEqual(self.run_mishap("tls", "init", "--dir", self.folder).returncode, 0)
        trust = self.run_mishap("tls", "trust", "--dir", self.folder)
        self.assertEqual(trust.returncode, 0, trust.stderr)
        ca = os.path.join(self.folder, "ca.pem")
        for words in ("xcrun simctl keychain booted add-root-cert", "update-ca-certificates", "--cacert",
                      "SSL_CERT_FILE", "network_security_config", ca):
            self.assertIn(words, trust.stdout)
        pin = re.search(r"sha256/\S+", trust.stdout).group(0)
        mishap = SecureMishap(self.folder, "--no-tls-catalogue")
        try:
            self.assertEqual(mishap.pin, pin)
        finally:
            mishap.stop()

    def test_trust_without_an_authority_fails_and_says_how_to_make_one(self):
        trust = self.run_mishap("tls", "trust", "--dir", os.path.join(self.folder, "none"))
        self.assertEqual(trust.returncode, 1)
        self.assertIn("mishap tls init", trust.stderr)

    def test_the_pin_stays_across_restarts_and_the_certificate_is_issued_anew(self):
        first = SecureMishap(self.folder, "--no-tls-catalogue")
        try:
            pin, der = first.pin, handshake(first.https, first.ca)[1]
        finally:
            first.stop()
        second = SecureMishap(self.folder, "--no-tls-catalogue", "--tls-name", "mishap.test")
        try:
            self.assertEqual(second.pin, pin)
            self.assertNotEqual(handshake(second.https, second.ca)[1], der)
        finally:
            second.stop()

    def test_bad_tls_flags_get_usage(self):
        for arguments, words in (
            (["--tls-cert", "x.pem"], "--tls-cert and --tls-key go together"),
            (["--tls-name", "a.test"], "--tls-name needs --tls-port"),
            (["--tls-port", "70000"], "--tls-port must be from 0 to 65535"),
        ):
            result = self.run_mishap("serve", "--port", "0", *arguments)
            self.assertEqual(result.returncode, 64, arguments)
            self.assertIn(words, result.stderr)
        for arguments, words in (
            (["--port", "off"], "--port off needs --tls-port"),
            (["--port", "eighty"], "The value 'eighty' is invalid for '--port <port>'"),
        ):
            result = self.run_mishap("serve", *arguments)
            self.assertEqual(result.returncode, 64, arguments)
            self.assertIn(words, result.stderr)

    def test_a_wrong_certificate_or_key_is_a_clear_error(self):
        self.assertEqual(self.run_mishap("tls", "init", "--dir", self.folder).returncode, 0)
        ca, ca_key, key = (os.path.join(self.folder, name) for name in ("ca.pem", "ca-key.pem", "server-key.pem"))
        junk = os.path.join(self.folder, "junk.pem")
        with open(junk, "w") as file:
            file.write("not a certificate\n")
        for certificate, private_key, words in (
            (ca, key, "the key is not the certificate's"),
            (junk, key, "reading the certificate"),
            (ca, junk, "reading the private key"),
            (os.path.join(self.folder, "missing.pem"), key, "cannot read --tls-cert"),
        ):
            result = self.run_mishap("serve", "--port", "0", "--tls-port", "0", "--tls-cert", certificate,
                                     "--tls-key", private_key, "--scenarios", os.path.join(REPO, "scenarios"))
            self.assertEqual(result.returncode, 1, words)
            self.assertIn(words, result.stderr)
            self.assertNotIn("listening", result.stdout)
        # A broken authority folder names the folder and the file's problem.
        with open(ca, "w") as file:
            file.write("not a certificate\n")
        result = self.run_mishap("serve", "--port", "0", "--tls-port", "0", "--tls-dir", self.folder,
                                 "--scenarios", os.path.join(REPO, "scenarios"))
        self.assertEqual(result.returncode, 1)
        self.assertIn(f"{self.folder}: reading the certificate", result.stderr)
        with open(ca_key) as file:
            self.assertNotIn(file.read().splitlines()[1], result.stderr)

    def test_port_off_serves_https_only(self):
        process = subprocess.Popen([MISHAP, "serve", "--port", "off", "--tls-port", "0", "--tls-dir", self.folder,
                                    "--no-tls-catalogue", "--scenarios", os.path.join(REPO, "scenarios"), "--log-level", "warning"],
                                   stdout=subprocess.PIPE, stderr=subprocess.DEVNULL, text=True)
        try:
            first = process.stdout.readline()
            match = re.match(r"mishap listening on (https://\S+) \(pin (sha256/\S+)\)$", first.strip())
            self.assertIsNotNone(match, first)
            ca = os.path.join(self.folder, "ca.pem")
            status, body, _ = get(match.group(1) + "/isUserNameAvailable?userName=someone", ca)
            self.assertEqual(status, 200)
            status, body, _ = get(match.group(1) + "/__mishap/tls", ca)
            self.assertEqual(json.loads(body)["url"], match.group(1))
            # Nothing answers plain HTTP on that port.
            port = urllib.parse.urlparse(match.group(1)).port
            with self.assertRaises((urllib.error.URLError, ConnectionError, http_client_errors())):
                urllib.request.urlopen(f"http://127.0.0.1:{port}/isUserNameAvailable?userName=someone", timeout=5).read()
        finally:
            process.terminate()
            process.wait(timeout=15)
            process.stdout.close()

    def test_own_certificate_and_key(self):
        self.assertEqual(self.run_mishap("tls", "init", "--dir", self.folder).returncode, 0)
        # Make a certificate for the server key with openssl, signed by the authority.
        if not shutil.which("openssl"):
            self.skipTest("openssl is not installed")
        ca, ca_key, key = (os.path.join(self.folder, name) for name in ("ca.pem", "ca-key.pem", "server-key.pem"))
        request = os.path.join(self.folder, "server.csr")
        certificate = os.path.join(self.folder, "own.pem")
        extensions = os.path.join(self.folder, "ext.cnf")
        with open(extensions, "w") as file:
            file.write("subjectAltName=DNS:localhost,IP:127.0.0.1\n")
        subprocess.run(["openssl", "req", "-new", "-key", key, "-subj", "/CN=own", "-out", request], check=True, capture_output=True)
        subprocess.run(["openssl", "x509", "-req", "-in", request, "-CA", ca, "-CAkey", ca_key, "-CAcreateserial",
                        "-days", "30", "-extfile", extensions, "-out", certificate], check=True, capture_output=True)
        process = subprocess.Popen([MISHAP, "serve", "--port", "0", "--tls-port", "0", "--tls-cert", certificate, "--tls-key", key,
                                    "--scenarios", os.path.join(REPO, "scenarios"), "--log-level", "warning"],
                                   stdout=subprocess.PIPE, stderr=subprocess.DEVNULL, text=True)
        try:
            process.stdout.readline()
            line = process.stdout.readline()
            https = re.search(r"listening on (https://\S+)", line).group(1)
            status, body, _ = get(https + "/isUserNameAvailable?userName=someone", ca)
            self.assertEqual(status, 200)
            parts = urllib.parse.urlparse(https)
            with socket.create_connection((parts.hostname, parts.port), timeout=3) as raw:
                with ssl.create_default_context(cafile=ca).wrap_socket(raw, server_hostname="localhost") as tls:
                    self.assertIn(b"own", tls.getpeercert(binary_form=True))
        finally:
            process.terminate()
            process.wait(timeout=15)
            process.stdout.close()


if __name__ == "__main__":
    unittest.main()
