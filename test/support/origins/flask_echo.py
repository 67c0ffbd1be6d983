#!/usr/bin/python3
"""A Flask origin that answers what it parsed (test/support/origins/parsed-view.ts).

Run with Debian's python3-flask (/usr/bin/python3; Debian 12, this machine and CI, ships Flask and
Werkzeug 2.2.2). It binds 127.0.0.1 on a free port and prints
`READY <port>` once the socket listens; the starter (flask-echo.ts) waits for that line.

Configured as Flask apps behind a proxy are told to be in Flask's own documentation:
  - ProxyFix(x_for=1, x_proto=1, x_host=1): the host and scheme the app builds URLs from come from
    the proxy's X-Forwarded-* headers;
  - the "HTTP Method Overrides" pattern of Flask's docs: X-HTTP-Method-Override picks the method
    (Werkzeug itself honours no override: no header, no `_method` field);
  - request.form / request.files / request.get_json(silent=True) as views read them (get_json
    only for JSON media types, Flask's default). Werkzeug does not undo Content-Encoding, and
    decodes forms as UTF-8 whatever charset the Content-Type names.
"""

import json
import logging
import sys

from flask import Flask, Response, request
from werkzeug.middleware.proxy_fix import ProxyFix
from werkzeug.serving import make_server

METHODS = ["GET", "HEAD", "POST", "PUT", "PATCH", "DELETE", "OPTIONS"]


class HTTPMethodOverrideMiddleware:
    """Flask documentation, "Adding HTTP Method Overrides" (patterns/methodoverrides), as published."""

    allowed_methods = frozenset(["GET", "HEAD", "POST", "DELETE", "PUT", "PATCH", "OPTIONS"])
    bodyless_methods = frozenset(["GET", "HEAD", "OPTIONS", "DELETE"])

    def __init__(self, app):
        self.app = app

    def __call__(self, environ, start_response):
        method = environ.get("HTTP_X_HTTP_METHOD_OVERRIDE", "").upper()
        if method in self.allowed_methods:
            environ["aegis.wire_method"] = environ.get("REQUEST_METHOD", "")
            environ["REQUEST_METHOD"] = method
        if method in self.bodyless_methods:
            environ["CONTENT_LENGTH"] = "0"
        return self.app(environ, start_response)


app = Flask(__name__)


def flatten(value, prefix, out):
    if isinstance(value, list):
        for i, item in enumerate(value):
            flatten(item, f"{prefix}[{i}]" if prefix else str(i), out)
    elif isinstance(value, dict):
        for key, item in value.items():
            flatten(item, f"{prefix}[{key}]" if prefix else str(key), out)
    elif isinstance(value, str):
        out.append([prefix, value])
    else:
        out.append([prefix, json.dumps(value)])
    return out


@app.route("/", defaults={"path": ""}, methods=METHODS)
@app.route("/<path:path>", methods=METHODS)
def echo(path):
    refused = None
    body, files = [], []
    # Read (and cache) the body first so its length is known; form parsing then reads the cache.
    body_bytes = len(request.get_data(cache=True, parse_form_data=False))
    try:
        body = [[k, v] for k, v in request.form.items(multi=True)]
        files = [{"field": k, "filename": f.filename or "", "size": len(f.read())} for k, f in request.files.items(multi=True)]
        document = request.get_json(silent=True)
        if document is not None:
            flatten(document, "", body)
    except Exception as err:  # a parser's refusal: the view would not run
        refused = f"{type(err).__name__}: {err}"
    answer = {
        "framework": "flask",
        "tag": request.headers.get("X-Shape", ""),
        "method": request.method,
        "wireMethod": request.environ.get("aegis.wire_method", request.method),
        "path": request.path,
        "baseUrl": request.host_url.rstrip("/"),
        "query": [[k, v] for k, v in request.args.items(multi=True)],
        "body": body,
        "cookies": [[k, v] for k, v in request.cookies.items(multi=True)],
        "files": files,
        "headers": [[k, v] for k, v in request.headers.items()],
        "bodyBytes": body_bytes,
        "refused": refused,
    }
    return Response(json.dumps(answer), status=200, mimetype="application/json")


def main():
    logging.getLogger("werkzeug").setLevel(logging.ERROR)
    app.wsgi_app = ProxyFix(HTTPMethodOverrideMiddleware(app.wsgi_app), x_for=1, x_proto=1, x_host=1)
    server = make_server("127.0.0.1", 0, app, threaded=True)
    print(f"READY {server.server_port}", flush=True)
    try:
        server.serve_forever()
    except KeyboardInterrupt:
        pass
    return 0


if __name__ == "__main__":
    sys.exit(main())
