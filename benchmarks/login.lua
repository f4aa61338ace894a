-- wrk script: POST /login with the JSON body of the successful login (scenarios/login.yaml).
-- The C baseline ignores the body and answers its fixed response; Mishap parses the JSON and
-- walks the login rules down to `success`.
wrk.method = "POST"
wrk.body = '{"email":"john@doe.com","password":"onlyjohnknowsme"}'
wrk.headers["Content-Type"] = "application/json"
