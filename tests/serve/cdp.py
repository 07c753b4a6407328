"""A small Chrome DevTools Protocol client over aiohttp's websocket (aiohttp comes with
textual-serve): start Debian's headless `chromium`, open isolated browser contexts (one per
operator: separate cookies), navigate, evaluate, press keys, take screenshots."""

from __future__ import annotations

import asyncio
import base64
import contextlib
import itertools
import json
import shutil
import subprocess
import tempfile
import time
from collections.abc import AsyncIterator
from pathlib import Path
from typing import Any

import aiohttp


def chromium_binary() -> str | None:
    for name in ("chromium", "chromium-browser", "google-chrome"):
        if path := shutil.which(name):
            return path
    return None


class Page:
    def __init__(self, ws: aiohttp.ClientWebSocketResponse) -> None:
        self.ws = ws
        self._ids = itertools.count(1)
        self._waiting: dict[int, asyncio.Future[dict[str, Any]]] = {}
        self._events: asyncio.Queue[dict[str, Any]] = asyncio.Queue()
        self._reader = asyncio.create_task(self._read())

    async def _read(self) -> None:
        async for msg in self.ws:
            data = json.loads(msg.data)
            if "id" in data and data["id"] in self._waiting:
                self._waiting.pop(data["id"]).set_result(data)
            else:
                await self._events.put(data)

    async def send(self, method: str, **params: Any) -> dict[str, Any]:
        i = next(self._ids)
        fut: asyncio.Future[dict[str, Any]] = asyncio.get_running_loop().create_future()
        self._waiting[i] = fut
        await self.ws.send_str(json.dumps({"id": i, "method": method, "params": params}))
        reply = await asyncio.wait_for(fut, 20)
        if "error" in reply:
            raise RuntimeError(f"{method}: {reply['error']}")
        result: dict[str, Any] = reply.get("result", {})
        return result

    async def record_terminal(self) -> None:
        """Keep what the console's websocket sends (its terminal output, escape codes and all) in
        `window.__tty` on every page from now on, so a test can wait for words on the screen."""
        await self.send("Page.enable")
        await self.send(
            "Page.addScriptToEvaluateOnNewDocument",
            source="""
            window.__tty = '';
            const Native = window.WebSocket, dec = new TextDecoder();
            window.WebSocket = function (...args) {
              const ws = new Native(...args);
              ws.addEventListener('message', (e) => {
                const text = typeof e.data === 'string' ? e.data : dec.decode(e.data, {stream: true});
                window.__tty = (window.__tty + text).slice(-2000000);
              });
              return ws;
            };
            window.WebSocket.prototype = Native.prototype;
            Object.assign(window.WebSocket, Native);
            """,
        )

    async def screen_shows(self, word: str, timeout: float = 15.0) -> None:
        """Wait until the console has drawn `word` since the last clear_screen()."""
        await self.wait_for(f"(window.__tty || '').includes({word!r})", timeout)

    async def clear_screen(self) -> None:
        await self.eval("window.__tty = ''; true")

    async def goto(self, url: str, wait: float = 10.0) -> None:
        await self.send("Page.enable")
        await self.send("Page.navigate", url=url)
        await self.event("Page.loadEventFired", wait)

    async def event(self, method: str, timeout: float = 10.0) -> dict[str, Any]:
        """The next event named `method` (earlier events of other names are dropped)."""
        end = time.monotonic() + timeout
        while True:
            e = await asyncio.wait_for(self._events.get(), max(0.01, end - time.monotonic()))
            if e.get("method") == method:
                return e

    async def eval(self, expression: str) -> Any:
        r = await self.send("Runtime.evaluate", expression=expression, returnByValue=True, awaitPromise=True)
        return r.get("result", {}).get("value")

    async def wait_for(self, expression: str, timeout: float = 10.0) -> Any:
        end = time.monotonic() + timeout
        while True:
            with contextlib.suppress(RuntimeError):
                if value := await self.eval(expression):
                    return value
            if time.monotonic() > end:
                raise TimeoutError(f"waited {timeout}s for {expression}")
            await asyncio.sleep(0.1)

    KEYS = {
        "enter": ("Enter", "Enter", 13, "\r"),
        "escape": ("Escape", "Escape", 27, ""),
        "tab": ("Tab", "Tab", 9, "\t"),
    }

    async def press(self, *keys: str, pause: float = 0.15) -> None:
        """Key presses as a user makes them: "5", "a", "enter", "escape"."""
        for key in keys:
            if key in self.KEYS:
                name, code, vk, text = self.KEYS[key]
            else:
                name, text = key, key
                code = f"Digit{key}" if key.isdigit() else f"Key{key.upper()}" if key.isalpha() else ""
                vk = ord(key.upper())
            down = {"type": "keyDown", "key": name, "code": code, "windowsVirtualKeyCode": vk}
            if text:
                down["text"] = text
            await self.send("Input.dispatchKeyEvent", **down)
            await self.send(
                "Input.dispatchKeyEvent", type="keyUp", key=name, code=code, windowsVirtualKeyCode=vk
            )
            await asyncio.sleep(pause)

    async def type(self, text: str) -> None:
        for ch in text:
            await self.press(ch, pause=0.03)

    async def screenshot(self, path: Path) -> Path:
        r = await self.send("Page.captureScreenshot", format="png")
        path.write_bytes(base64.b64decode(r["data"]))
        return path


class Browser:
    def __init__(self, proc: subprocess.Popen[bytes], port: int, session: aiohttp.ClientSession) -> None:
        self.proc = proc
        self.port = port
        self.http = session

    async def new_page(self, width: int = 1280, height: int = 800) -> Page:
        """A page in a fresh browser context: its own cookies, like another person's browser."""
        async with self.http.get(f"http://127.0.0.1:{self.port}/json/version") as r:
            browser_ws = (await r.json())["webSocketDebuggerUrl"]
        ws = await self.http.ws_connect(browser_ws, max_msg_size=0)
        root = Page(ws)
        ctx = await root.send("Target.createBrowserContext", disposeOnDetach=False)
        target = await root.send(
            "Target.createTarget", url="about:blank", browserContextId=ctx["browserContextId"]
        )
        page_ws = await self.http.ws_connect(
            f"ws://127.0.0.1:{self.port}/devtools/page/{target['targetId']}", max_msg_size=0
        )
        page = Page(page_ws)
        await page.send(
            "Emulation.setDeviceMetricsOverride",
            width=width,
            height=height,
            deviceScaleFactor=1,
            mobile=False,
        )
        return page


@contextlib.asynccontextmanager
async def chromium(binary: str) -> AsyncIterator[Browser]:
    profile = tempfile.mkdtemp(prefix="memconsole-chromium-")
    proc = subprocess.Popen(
        [
            binary,
            "--headless=new",
            "--no-sandbox",  # the test runs as root
            "--disable-gpu",
            "--no-first-run",
            "--disable-extensions",
            "--remote-debugging-port=0",
            f"--user-data-dir={profile}",
            "about:blank",
        ],
        stdout=subprocess.DEVNULL,
        stderr=subprocess.DEVNULL,
    )
    try:
        port_file = Path(profile) / "DevToolsActivePort"
        end = time.monotonic() + 20
        while not (port_file.exists() and port_file.read_text().strip()):
            if time.monotonic() > end or proc.poll() is not None:
                raise RuntimeError("chromium did not start (no DevToolsActivePort)")
            await asyncio.sleep(0.1)
        port = int(port_file.read_text().split()[0])
        async with aiohttp.ClientSession() as http:
            yield Browser(proc, port, http)
    finally:
        proc.terminate()
        try:
            proc.wait(5)
        except subprocess.TimeoutExpired:
            proc.kill()
        shutil.rmtree(profile, ignore_errors=True)
