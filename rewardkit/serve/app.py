"""The FastAPI application: routes, token check, size limits, JSON errors.

Every error is JSON ``{"error": message, "status": code}``: 400 for bad input
(malformed JSON, unknown preset or objective, malformed tests, a column of
the wrong length), 401 for a missing or wrong token, 403 for a ``Host`` a
token-less service does not answer, 413 for a body, batch or suite over the
caps, 415 for a body not sent as JSON, 422 for a body of the wrong shape, 503
when too many requests wait or the service stops, 500 (logged) for a fault of
the service itself.  None of them stops the server.  Scoring, runs and
analyses happen in worker threads, at most ``config.max_concurrent`` requests
at once, so the event loop keeps answering; each request holds a ticket of
the service's scheduler, through which its jobs take turns with other
requests'.  A request past its sandbox or analysis time gets its answer with
the work not done left out (``sandbox_error``, or reports without a score).
"""

import asyncio
import functools
import hmac
import json
import logging
from collections.abc import AsyncIterator, Callable, Mapping
from contextlib import asynccontextmanager
from typing import Annotated, Any, TypeVar

import anyio.to_thread
from fastapi import Depends, FastAPI, HTTPException, Query, Request
from fastapi.exceptions import RequestValidationError
from fastapi.responses import JSONResponse
from fastapi.security import HTTPAuthorizationCredentials, HTTPBearer
from starlette.exceptions import HTTPException as StarletteHTTPException
from starlette.types import ASGIApp, Message, Receive, Scope, Send

from .. import __version__
from .config import ServeConfig, host_of, is_loopback
from .models import (
    AnalyzeRequest,
    AnalyzeResponse,
    ErrorResponse,
    OpenRLHFRequest,
    OpenRLHFResponse,
    PresetResponse,
    RunRequest,
    ScoreRequest,
    ScoreResponse,
)
from .scheduler import Cancelled, Ticket
from .service import BatchTooLarge, Service

log = logging.getLogger("rewardkit.serve")
ERROR_STATUSES = (400, 401, 403, 413, 415, 422, 500, 503)
DISCONNECT_POLL_S = 0.25  # how often a computing request checks that its client is still there
T = TypeVar("T")

DESCRIPTION = """Rewards for generated code over HTTP: the same presets, sandbox and analyzers
as in-process rewardkit.  Send `Authorization: Bearer <token>` when the service has a token."""


def error(status: int, message: str, details: list[dict[str, Any]] | None = None,
          headers: Mapping[str, str] | None = None) -> JSONResponse:
    """The service's JSON error response."""
    body: dict[str, Any] = {"error": message, "status": status}
    if details is not None:
        body["details"] = details
    return JSONResponse(body, status_code=status, headers=headers)


class BodyLimit:
    """Answer 413 to a request body over ``max_bytes`` before the application reads it."""

    def __init__(self, app: ASGIApp, max_bytes: int) -> None:
        self.app, self.max_bytes = app, max_bytes

    async def __call__(self, scope: Scope, receive: Receive, send: Send) -> None:
        if scope["type"] != "http":
            await self.app(scope, receive, send)
            return
        declared = dict(scope["headers"]).get(b"content-length")
        if declared is not None and declared.isdigit() and int(declared) > self.max_bytes:
            await self.too_large(scope, receive, send)
            return
        body = bytearray()
        more = True
        while more:
            message = await receive()
            if message["type"] == "http.disconnect":
                return
            body += message.get("body", b"")
            more = message.get("more_body", False)
            if len(body) > self.max_bytes:
                await self.too_large(scope, receive, send)
                return
        replayed = False

        async def replay() -> Message:
            nonlocal replayed
            if replayed:
                return await receive()
            replayed = True
            return {"type": "http.request", "body": bytes(body), "more_body": False}

        await self.app(scope, replay, send)

    async def too_large(self, scope: Scope, receive: Receive, send: Send) -> None:
        """The 413 answer (made only when needed, not for every request)."""
        await error(413, f"request body over {self.max_bytes:,} bytes (the service's --max-body-mb); "
                         "split the batch")(scope, receive, send)


class LoopbackHosts:
    """Answer 403 to a request whose ``Host`` is not a loopback name (for a service without a token).

    A page in a browser on this machine may reach a loopback port under a name
    it controls (DNS rebinding); a token-less service answers only requests
    addressed to ``localhost``, ``127.x.x.x`` or ``[::1]``.
    """

    def __init__(self, app: ASGIApp) -> None:
        self.app = app

    async def __call__(self, scope: Scope, receive: Receive, send: Send) -> None:
        if scope["type"] == "http":
            host = dict(scope["headers"]).get(b"host", b"").decode("latin-1")
            if not is_loopback(host_of(host)):
                await error(403, f"Host {host[:100]!r} is not allowed: this service has no token, so it "
                                 "answers only requests to localhost, 127.0.0.1 or [::1] (start it "
                                 "with --token to take other names)")(scope, receive, send)
                return
        await self.app(scope, receive, send)


def _authorization(token: str, allow_query: bool = False) -> Callable[..., Any]:
    """A dependency that checks the bearer token (or ``?token=`` where the caller cannot send headers)."""
    bearer = HTTPBearer(auto_error=False, description="the token the service was started with")

    async def check(
        credentials: Annotated[HTTPAuthorizationCredentials | None, Depends(bearer)],
        query_token: Annotated[str | None, Query(alias="token", include_in_schema=allow_query)] = None,
    ) -> None:
        given = credentials.credentials if credentials else query_token if allow_query else None
        if given is None:
            raise HTTPException(401, "this service needs a token: send 'Authorization: Bearer <token>'",
                                headers={"WWW-Authenticate": "Bearer"})
        if not hmac.compare_digest(given.encode(), token.encode()):
            raise HTTPException(401, "wrong token", headers={"WWW-Authenticate": "Bearer"})

    return check


def _validation_message(errors: list[dict[str, Any]]) -> tuple[int, str]:
    """Status and message for a request that does not parse: 400 for bad JSON, else 422."""
    bad_json = next((e for e in errors if e.get("type") == "json_invalid"), None)
    if bad_json is not None:
        return 400, f"the body is not valid JSON: {bad_json.get('ctx', {}).get('error', bad_json['msg'])}"
    shown = [f"{'.'.join(str(part) for part in e['loc'])}: {e['msg']}" for e in errors[:5]]
    more = f" (and {len(errors) - 5} more)" if len(errors) > 5 else ""
    return 422, "invalid request: " + "; ".join(shown) + more


def create_app(config: ServeConfig | None = None, service: Service | None = None) -> FastAPI:
    """The reward service's application; its sandboxes stop when the application shuts down."""
    config = config or ServeConfig()
    service = service or Service(config)
    limiters: list[anyio.CapacityLimiter] = []  # made in the event loop, at start-up

    @asynccontextmanager
    async def lifespan(_: FastAPI) -> AsyncIterator[None]:
        limiters.append(anyio.CapacityLimiter(config.max_concurrent))
        try:
            yield
        finally:
            service.close()

    async def compute(request: Request, function: Callable[..., T], *args: Any) -> T:
        """Run ``function`` in a worker thread as a new request of the scheduler's; bad input
        becomes 400, a request over its size caps 413, a busy or stopping service 503, a fault
        a logged 500.

        If the client goes away, the request's work not yet started is dropped.  A
        request cancelled by the server's shutdown returns at once: its thread is left
        to the service's ``close()``, which ends its work.
        """
        limiter = limiters[0] if limiters else None
        if limiter is not None and limiter.statistics().tasks_waiting >= config.caps.queued:
            raise HTTPException(503, f"the service is busy ({config.caps.queued} requests already wait); "
                                     "send the request again later", headers={"Retry-After": "1"})
        ticket = service.scheduler.ticket()
        watcher = asyncio.get_running_loop().create_task(_drop_when_gone(request, ticket))
        try:
            return await anyio.to_thread.run_sync(functools.partial(ticket.run, function, *args),
                                                  limiter=limiter, abandon_on_cancel=True)
        except BatchTooLarge as exc:
            raise HTTPException(413, str(exc)) from exc
        except Cancelled as exc:
            raise HTTPException(503, "the service is stopping; send the request again later") from exc
        except asyncio.CancelledError:
            if not service.stopping:  # not the server's shutdown: let the cancellation through
                raise
            raise HTTPException(503, "the service is stopping; send the request again later") from None
        except (ValueError, TypeError) as exc:  # ConfigError, ScoreError, SuiteError, JSON errors
            raise HTTPException(400, str(exc)) from exc
        except Exception as exc:
            log.exception("request failed")
            raise HTTPException(500, f"the service failed: {type(exc).__name__}: {exc}") from exc
        finally:
            watcher.cancel()

    async def _drop_when_gone(request: Request, ticket: Ticket) -> None:
        while not await request.is_disconnected():
            await asyncio.sleep(DISCONNECT_POLL_S)
        service.scheduler.drop(ticket)

    app = FastAPI(title="rewardkit", version=__version__, description=DESCRIPTION, lifespan=lifespan,
                  responses={code: {"model": ErrorResponse} for code in ERROR_STATUSES})
    app.add_middleware(BodyLimit, max_bytes=config.caps.body_bytes)
    if not config.token:
        app.add_middleware(LoopbackHosts)
    auth = [Depends(_authorization(config.token))] if config.token else []

    @app.exception_handler(StarletteHTTPException)
    async def http_error(_: Request, exc: StarletteHTTPException) -> JSONResponse:
        return error(exc.status_code, str(exc.detail), headers=exc.headers)

    @app.exception_handler(RequestValidationError)
    async def invalid(request: Request, exc: RequestValidationError) -> JSONResponse:
        if "json" not in request.headers.get("content-type", ""):  # not parsed: a guard against CSRF
            return error(415, "send the body as JSON, with 'Content-Type: application/json'")
        errors = [{k: v for k, v in e.items() if k in ("loc", "msg", "type")} for e in exc.errors()]
        status, message = _validation_message(list(exc.errors()))
        return error(status, message, details=json.loads(json.dumps(errors, default=str)))

    @app.exception_handler(Exception)
    async def internal(_: Request, exc: Exception) -> JSONResponse:
        log.error("unhandled error", exc_info=exc)
        return error(500, f"the service failed: {type(exc).__name__}")

    @app.get("/health", summary="status, version, sandbox, limits and load")
    async def health() -> dict[str, Any]:
        report = service.health()
        if limiters:
            report["requests"] = {"computing": limiters[0].borrowed_tokens,
                                  "queued": limiters[0].statistics().tasks_waiting}
            report["saturated"] |= report["requests"]["queued"] > 0
        return report

    @app.get("/presets/{preset}", dependencies=auth, response_model=PresetResponse,
             summary="a preset's components and weights")
    async def preset(request: Request, preset: str, objective: str | None = None) -> dict[str, Any]:
        return await compute(request, service.components, preset, objective)

    @app.post("/score", dependencies=auth, response_model=ScoreResponse,
              summary="rewards, with components, of a batch of completions")
    async def score(request: Request, body: ScoreRequest) -> dict[str, Any]:
        return await compute(request, service.score, body.preset, body.objective, body.completions,
                             body.columns, body.format)

    @app.post("/run", dependencies=auth, summary="run code against a test suite: ExecutionResult.to_dict()")
    async def run(request: Request, body: RunRequest) -> dict[str, Any]:
        limits = body.limits.model_dump(exclude_none=True) if body.limits else None
        return await compute(request, service.run, body.code, body.tests, body.language, limits, body.repeats)

    @app.post("/analyze", dependencies=auth, response_model=AnalyzeResponse,
              summary="static quality analysis: QualityReport.to_dict() per source")
    async def analyze(request: Request, body: AnalyzeRequest) -> dict[str, Any]:
        return {"reports": await compute(request, service.analyze, body.codes, body.profile)}

    openrlhf_auth = [Depends(_authorization(config.token, allow_query=True))] if config.token else []

    @app.post("/openrlhf", dependencies=openrlhf_auth, response_model=OpenRLHFResponse,
              summary="OpenRLHF's remote reward protocol (--reward.remote_url)")
    async def openrlhf(
        request: Request, body: OpenRLHFRequest, preset: str = "cisq_grpo", objective: str | None = None,
        eos: Annotated[list[str] | None, Query(description=(
            "end-of-sequence or pad text to cut off the end of each completion, besides the common "
            "chat models' (repeat for more; URL-encoded, no commas)"))] = None,
        fault: Annotated[str | None, Query(description=(
            "the reward of a sample a sandbox fault left without one: a number (default 0.0, "
            "flagged rewardkit_fault in extra_logs) or 'raise' (the request fails with 500)"))] = None,
    ) -> dict[str, Any]:
        return await compute(request, service.openrlhf, preset, objective, body.query, body.prompts,
                             body.labels, eos or (), fault)

    return app
