"""Requests to the default scenarios while make api-check fuzzes the admin API, so the answers
schemathesis checks have something in them: journal entries of every kind (answers, faults,
delays, state changes, bodies that are not text), requests no rule answered, Retry-After
observations, session state. Admin calls are not journaled; without this the journal, the
unmatched list and the Retry-After check would be empty whenever they are read.

  traffic.py paging URL DESCRIPTION   the journal's paging, once: more entries than one answer
                                      holds, read in pages through 'next', each answer valid
                                      against the description's Journal schema
  traffic.py loop URL SECONDS         the traffic, until SECONDS pass or the server is gone

Standard library and jsonschema only (both in make api-check's virtual environment).
"""

import http.client
import json
import sys
import time
import urllib.error
import urllib.parse
import urllib.request


def call(base, method, path, body=None, headers=None, timeout=5):
    """(status, body bytes) of a request; (None, b"") when the connection fails (a fault rule)."""
    request = urllib.request.Request(base + path, data=body, method=method, headers=headers or {})
    try:
        with urllib.request.urlopen(request, timeout=timeout) as response:
            return response.status, response.read()
    except urllib.error.HTTPError as error:
        return error.code, error.read()
    except (urllib.error.URLError, http.client.HTTPException, ConnectionError, TimeoutError, OSError):
        return None, b""


def paging(base, description_url):
    """Fills the journal past one answer's budget (4 MiB) and reads it back in pages."""
    import jsonschema

    with urllib.request.urlopen(description_url, timeout=10) as response:
        description = json.load(response)
    journal_schema = dict(description, **{"$ref": "#/components/schemas/Journal"})
    validator = jsonschema.Draft202012Validator(journal_schema)
    call(base, "POST", "/__mishap/reset")
    # The journal keeps 64 KiB of each body: 80 of them make over 5 MiB of JSON.
    for number in range(80):
        status, _ = call(base, "POST", "/login", body=("x" * 70000).encode(),
                         headers={"Content-Type": "text/plain", "X-Mishap-Session": f"paging{number % 3}"})
        if status is None:
            sys.exit("api-check: the server did not answer a large request")
    seen, after, pages = [], None, 0
    while pages < 10:
        status, body = call(base, "GET", "/__mishap/requests" + (f"?after={after}" if after is not None else ""))
        listing = json.loads(body)
        errors = [error.message for error in validator.iter_errors(listing)]
        if status != 200 or errors:
            sys.exit(f"api-check: GET /__mishap/requests answered {status}, not as described: {errors[:3]}")
        pages += 1
        seen += [entry["id"] for entry in listing["requests"]]
        if not listing["truncated"]:
            break
        after = listing["next"]
    if pages < 2 or len(seen) != 80 or seen != sorted(set(seen)):
        sys.exit(f"api-check: the journal's 80 entries came in {pages} page(s) as {len(seen)} entries")
    print(f"api-check: the journal's 80 large entries came in {pages} pages, each as described")
    call(base, "POST", "/__mishap/reset")


def loop(base, seconds):
    """Requests of every kind, round after round, until `seconds` pass or the server is gone."""
    name = "/isUserNameAvailable?userName="
    form = {"Content-Type": "application/x-www-form-urlencoded"}
    rounds, failures, deadline = 0, 0, time.monotonic() + seconds
    while time.monotonic() < deadline and failures < 20:
        session = {"X-Mishap-Session": f"traffic{rounds % 4}"}
        status, _ = call(base, "GET", name + "alice", headers=session)
        failures = failures + 1 if status is None else 0
        call(base, "GET", name + "ratelimited", headers=session)  # 429 with Retry-After: a retry observation
        call(base, "GET", name + "maintenance", headers=session)  # a cycle
        call(base, "GET", name + "reset")  # a fault: no status
        call(base, "GET", name + ("slowpoke" if rounds % 10 == 0 else "servererror"))  # a delay, now and then
        call(base, "POST", "/login", body=b'{"email": "john@doe.com", "password": "onlyjohnknowsme"}',
             headers={"Content-Type": "application/json"})
        call(base, "POST", "/login", body=b"\xff\xfe\x00 not text", headers={"Content-Type": "application/octet-stream"})
        status, body = call(base, "POST", "/token", headers=dict(form, **session),
                            body=b"grant_type=password&username=john@doe.com&password=onlyjohnknowsme")
        if status == 200:
            token = json.loads(body).get("access_token", "")
            call(base, "GET", "/me", headers=dict(session, Authorization="Bearer " + token))  # state changes
        call(base, "GET", "/search?q=mishap", headers=session)  # a quota
        call(base, "GET", "/login")  # unmatched: a near miss
        call(base, "GET", "/no/such/path?x=1")  # unmatched: nothing near
        rounds += 1
        time.sleep(0.05)


if __name__ == "__main__":
    if len(sys.argv) == 4 and sys.argv[1] == "paging":
        paging(sys.argv[2], sys.argv[3])
    elif len(sys.argv) == 4 and sys.argv[1] == "loop":
        loop(sys.argv[2], float(sys.argv[3]))
    else:
        sys.exit(__doc__)
