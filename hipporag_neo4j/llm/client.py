"""OpenAI-compatible chat client: built lazily, retries only transient failures, caches responses.

Retried: 429, 5xx, timeouts and connection errors, with exponential backoff and jitter (Retry-After
honoured, capped at ``backoff_max``). Anything else (400, 401, 404...) raises :class:`LLMError` at once.
The API key never appears in reprs, logs or error messages.
"""

from __future__ import annotations

import email.utils
import logging
import math
import os
import random
import threading
import time
from collections.abc import Callable, Mapping, Sequence
from concurrent.futures import ThreadPoolExecutor, as_completed
from dataclasses import dataclass
from typing import Any
from urllib.parse import urlsplit, urlunsplit

import openai

from hipporag_neo4j.errors import ConfigError, LLMError, LLMOutputError
from hipporag_neo4j.llm.cache import ResponseCache, request_key
from hipporag_neo4j.llm.structured import JsonSchema, response_format
from hipporag_neo4j.models import Usage
from hipporag_neo4j.settings import LLMSettings

log = logging.getLogger(__name__)

Messages = list[dict[str, str]]

#: Sent when no key is configured, so that local servers (vLLM, Ollama...) that ignore it work.
PLACEHOLDER_API_KEY = "not-needed"

_DETAIL_LIMIT = 300


@dataclass(frozen=True)
class ChatResult:
    """One chat answer. ``usage`` is this call's: requests/retries/tokens, or ``cached=1`` for a cache hit.

    ``finish_reason`` is the server's (``"length"``: cut at ``max_tokens``); None for a cache hit.
    """

    text: str
    usage: Usage
    cached: bool = False
    finish_reason: str | None = None

    @property
    def truncated(self) -> bool:
        """True when the answer was cut at ``max_tokens`` (often a model repeating itself)."""
        return self.finish_reason == "length"


def safe_url(url: str | None) -> str | None:
    """``url`` without user info, query or fragment (where credentials could hide)."""
    if url is None:
        return None
    parts = urlsplit(url)
    host = parts.hostname or ""
    if parts.port is not None:
        host = f"{host}:{parts.port}"
    return urlunsplit((parts.scheme, host, parts.path, "", ""))


def retry_after_seconds(headers: Mapping[str, str]) -> float | None:
    """Seconds asked for by ``retry-after-ms`` or ``retry-after`` (seconds or an HTTP date), if any."""
    for name, divisor in (("retry-after-ms", 1000.0), ("retry-after", 1.0)):
        value = headers.get(name)
        if value is None:
            continue
        try:
            seconds = float(value) / divisor
        except ValueError:
            continue
        if math.isfinite(seconds) and seconds >= 0:
            return seconds
    value = headers.get("retry-after")
    if value:
        try:
            when = email.utils.parsedate_to_datetime(value)
        except (TypeError, ValueError):
            return None
        return max(0.0, when.timestamp() - time.time())
    return None


class LLMClient:
    """Chat completions against ``settings.base_url`` (or OpenAI / Azure OpenAI).

    The constructor opens nothing: the HTTP client and the cache file are created on first use.
    ``sleep`` is the function used to wait between retries (tests pass a recorder).
    """

    def __init__(self, settings: LLMSettings, *, sleep: Callable[[float], None] = time.sleep) -> None:
        if settings.model is None:
            raise ConfigError("llm.model (HIPPORAG_LLM_MODEL) is not set: no LLM configured")
        if settings.azure_api_version and not settings.base_url:
            raise ConfigError("llm.azure_api_version is set but llm.base_url (the Azure endpoint) is not")
        self.settings = settings
        self.model: str = settings.model
        self._sleep = sleep
        self._lock = threading.Lock()
        self._usage = Usage()
        self._openai: openai.OpenAI | None = None
        self._cache: ResponseCache | None = None
        self._cache_opened = False
        self._secret = self._api_key()

    def __repr__(self) -> str:
        return (
            f"LLMClient(model={self.model!r}, base_url={safe_url(self.settings.base_url)!r}, "
            f"cache={str(self.settings.cache_path) if self.settings.cache_path else None!r})"
        )

    def _api_key(self) -> str:
        if self.settings.api_key is not None and self.settings.api_key.get_secret_value():
            return self.settings.api_key.get_secret_value()
        names = (
            ("OPENAI_API_KEY", "AZURE_OPENAI_API_KEY")
            if self.settings.azure_api_version
            else ("OPENAI_API_KEY",)
        )
        for name in names:
            if os.environ.get(name):
                return os.environ[name]
        return PLACEHOLDER_API_KEY

    def _redact(self, text: str) -> str:
        if self._secret != PLACEHOLDER_API_KEY and len(self._secret) >= 4:
            text = text.replace(self._secret, "***")
        return text

    # -- lazily built resources ---------------------------------------------------------------------------

    def _client(self) -> openai.OpenAI:
        with self._lock:
            if self._openai is None:
                s = self.settings
                if s.azure_api_version:
                    self._openai = openai.AzureOpenAI(
                        azure_endpoint=s.base_url or "",  # checked in __init__
                        api_key=self._secret,
                        api_version=s.azure_api_version,
                        timeout=s.timeout,
                        max_retries=0,
                    )
                else:
                    self._openai = openai.OpenAI(
                        base_url=s.base_url, api_key=self._secret, timeout=s.timeout, max_retries=0
                    )
            return self._openai

    def _response_cache(self) -> ResponseCache | None:
        with self._lock:
            if not self._cache_opened:
                self._cache_opened = True
                if self.settings.cache_path is not None:
                    self._cache = ResponseCache(self.settings.cache_path)
            return self._cache

    def close(self) -> None:
        """Close the HTTP client and the cache file (both are reopened if the client is used again)."""
        with self._lock:
            if self._openai is not None:
                self._openai.close()
                self._openai = None
            if self._cache is not None:
                self._cache.close()

    def __enter__(self) -> LLMClient:
        return self

    def __exit__(self, *exc_info: object) -> None:
        self.close()

    # -- usage ----------------------------------------------------------------------------------------------

    @property
    def usage(self) -> Usage:
        """Cumulative usage: ``requests`` = calls sent to the API (each once, however often retried),
        ``retries`` = extra attempts, ``cached`` = calls answered by the cache; tokens as the API reported."""
        with self._lock:
            return self._usage.model_copy()

    def _count(self, usage: Usage) -> None:
        with self._lock:
            u = self._usage
            self._usage = Usage(
                requests=u.requests + usage.requests,
                cached=u.cached + usage.cached,
                prompt_tokens=u.prompt_tokens + usage.prompt_tokens,
                completion_tokens=u.completion_tokens + usage.completion_tokens,
                retries=u.retries + usage.retries,
            )

    # -- calls ----------------------------------------------------------------------------------------------

    def request_body(
        self,
        messages: Messages,
        *,
        json_mode: bool = False,
        schema: JsonSchema | None = None,
        **params: Any,
    ) -> dict[str, Any]:
        """The chat-completions request (also the cache key's content): settings' defaults < ``params``.

        ``json_mode`` asks for a JSON answer the way ``llm.structured_output`` spells it for the server,
        constrained to ``schema`` where that spelling carries one.
        """
        s = self.settings
        body: dict[str, Any] = {"model": self.model, "messages": messages, "temperature": s.temperature}
        if s.max_tokens is not None:
            body["max_tokens"] = s.max_tokens
        if s.frequency_penalty is not None:
            body["frequency_penalty"] = s.frequency_penalty
        if json_mode and (fmt := response_format(s.json_output, schema)) is not None:
            body["response_format"] = fmt
        if s.extra_body:
            body["extra_body"] = dict(s.extra_body)  # the openai client merges it into the JSON body
        body.update(params)
        return body

    def chat(
        self,
        messages: Messages,
        *,
        json_mode: bool = False,
        schema: JsonSchema | None = None,
        **params: Any,
    ) -> ChatResult:
        """One chat completion (from the cache when the same request was answered before).

        Raises :class:`LLMError` after ``max_retries`` transient failures or at once on any other error,
        and :class:`LLMOutputError` when the answer holds no text.
        """
        body = self.request_body(messages, json_mode=json_mode, schema=schema, **params)
        key = request_key(body)
        cache = self._response_cache()
        if cache is not None:
            text = cache.get(key)
            if text is not None:
                usage = Usage(cached=1)
                self._count(usage)
                return ChatResult(text=text, usage=usage, cached=True)
        text, usage, finish_reason = self._call(body)
        if finish_reason == "length":
            log.warning(
                "LLM answer cut at max_tokens=%s (model %r): the model may be repeating itself; "
                "llm.frequency_penalty or a repeat penalty in llm.extra_body can help",
                body.get("max_tokens"),
                self.model,
            )
        if cache is not None:
            cache.put(key, self.model, text, usage.prompt_tokens, usage.completion_tokens)
        return ChatResult(text=text, usage=usage, cached=False, finish_reason=finish_reason)

    def _call(self, body: dict[str, Any]) -> tuple[str, Usage, str | None]:
        client = self._client()
        retries = 0
        while True:
            retry_after: float | None = None
            try:
                response = client.chat.completions.create(**body)
            except openai.APIStatusError as exc:
                status = exc.status_code
                if status != 429 and status < 500:
                    self._count(Usage(requests=1, retries=retries))
                    raise LLMError(
                        f"LLM error {status} (model {self.model!r}, not retried): {self._detail(exc)}"
                    ) from None
                failure = f"LLM error {status}"
                detail = self._detail(exc)
                retry_after = retry_after_seconds(exc.response.headers)
            except openai.APITimeoutError:
                failure = "LLM timeout"
                detail = f"no answer within {self.settings.timeout:g}s"
            except openai.APIConnectionError as exc:
                failure = "LLM connection error"
                detail = self._detail(exc)
            except openai.APIError as exc:  # e.g. a response body that is not a chat completion
                self._count(Usage(requests=1, retries=retries))
                raise LLMError(f"LLM error (model {self.model!r}): {self._detail(exc)}") from None
            else:
                return self._read(response, retries)
            if retries >= self.settings.max_retries:
                self._count(Usage(requests=1, retries=retries))
                raise LLMError(f"{failure} after {retries} retries (model {self.model!r}): {detail}")
            delay = self.retry_delay(retries, retry_after)
            retries += 1
            log.warning(
                "%s (model %r); retry %d/%d in %.2fs",
                failure,
                self.model,
                retries,
                self.settings.max_retries,
                delay,
            )
            self._sleep(delay)

    def _read(self, response: Any, retries: int) -> tuple[str, Usage, str | None]:
        reported = getattr(response, "usage", None)
        usage = Usage(
            requests=1,
            retries=retries,
            prompt_tokens=int(getattr(reported, "prompt_tokens", 0) or 0),
            completion_tokens=int(getattr(reported, "completion_tokens", 0) or 0),
        )
        self._count(usage)
        choices = getattr(response, "choices", None) or []
        text = choices[0].message.content if choices else None
        if not text:
            reason = choices[0].finish_reason if choices else "no choices"
            raise LLMOutputError(f"LLM returned no text (model {self.model!r}, finish_reason={reason!r})")
        finish_reason = getattr(choices[0], "finish_reason", None)
        return str(text), usage, str(finish_reason) if finish_reason is not None else None

    def _detail(self, exc: openai.APIError) -> str:
        detail = exc.message
        if isinstance(exc.body, dict) and isinstance(exc.body.get("message"), str):
            detail = exc.body["message"]
        detail = self._redact(" ".join(str(detail).split()))
        return detail if len(detail) <= _DETAIL_LIMIT else detail[:_DETAIL_LIMIT] + "..."

    def retry_delay(self, retry: int, retry_after: float | None = None) -> float:
        """Seconds before retry number ``retry + 1``: ``backoff_base * 2**retry`` with jitter (50-100%),
        at least ``retry_after`` when the server asked for it, never more than ``backoff_max``."""
        backoff = self.settings.backoff_base * (2.0**retry) * random.uniform(0.5, 1.0)
        if retry_after is not None:
            backoff = max(backoff, retry_after)
        return min(backoff, self.settings.backoff_max)

    def chat_many(
        self,
        requests: Sequence[Messages],
        *,
        json_mode: bool = False,
        schema: JsonSchema | None = None,
        progress: Callable[[int], None] | None = None,
    ) -> list[ChatResult | LLMError]:
        """``chat`` for each request, ``settings.concurrency`` at a time; results in request order.

        A failed request yields its :class:`LLMError` in its slot; the others are unaffected.
        ``progress(n)`` is called (in the caller's thread) with the number of requests just finished.
        """
        if not requests:
            return []
        results: dict[int, ChatResult | LLMError] = {}
        workers = min(self.settings.concurrency, len(requests))
        with ThreadPoolExecutor(max_workers=workers, thread_name_prefix="llm") as pool:
            futures = {
                pool.submit(self._chat_or_error, messages, json_mode, schema): i
                for i, messages in enumerate(requests)
            }
            for future in as_completed(futures):
                results[futures[future]] = future.result()
                if progress is not None:
                    progress(1)
        return [results[i] for i in range(len(requests))]

    def _chat_or_error(
        self, messages: Messages, json_mode: bool, schema: JsonSchema | None
    ) -> ChatResult | LLMError:
        try:
            return self.chat(messages, json_mode=json_mode, schema=schema)
        except LLMError as exc:
            return exc
