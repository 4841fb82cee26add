"""An MCP client built on the Python MCP SDK's OAuth client, without a client metadata URL: it
registers dynamically (RFC 7591), prints the authorization URL on stderr for the test's browser,
receives the code on a loopback callback, then calls the `applications` tool and prints the result
as one JSON line on stdout. Usage: python registering_client.py MCP_URL"""

import asyncio
import json
import sys
from urllib.parse import parse_qs, urlparse

from mcp import Client
from mcp.client.auth import AuthorizationCodeResult, OAuthClientProvider
from mcp.client.streamable_http import streamable_http_client
from mcp.shared._httpx_utils import create_mcp_http_client
from mcp.shared.auth import OAuthClientInformationFull, OAuthClientMetadata, OAuthToken


class MemoryStorage:
    def __init__(self) -> None:
        self.tokens: OAuthToken | None = None
        self.client: OAuthClientInformationFull | None = None

    async def get_tokens(self) -> OAuthToken | None:
        return self.tokens

    async def set_tokens(self, tokens: OAuthToken) -> None:
        self.tokens = tokens

    async def get_client_info(self) -> OAuthClientInformationFull | None:
        return self.client

    async def set_client_info(self, client_info: OAuthClientInformationFull) -> None:
        self.client = client_info


async def main(url: str) -> None:
    loop = asyncio.get_running_loop()
    callback: asyncio.Future[dict[str, list[str]]] = loop.create_future()

    async def on_callback(reader: asyncio.StreamReader, writer: asyncio.StreamWriter) -> None:
        request_line = (await reader.readline()).decode()
        while (await reader.readline()) not in (b"\r\n", b"\n", b""):
            pass
        target = request_line.split(" ")[1]
        writer.write(b"HTTP/1.1 200 OK\r\ncontent-type: text/plain\r\nconnection: close\r\n\r\nSigned in.")
        await writer.drain()
        writer.close()
        if urlparse(target).path == "/callback" and not callback.done():
            callback.set_result(parse_qs(urlparse(target).query))

    server = await asyncio.start_server(on_callback, "127.0.0.1", 0)
    port = server.sockets[0].getsockname()[1]
    redirect_uri = f"http://127.0.0.1:{port}/callback"

    async def redirect_handler(authorization_url: str) -> None:
        print(f"AUTHORIZE {authorization_url}", file=sys.stderr, flush=True)

    async def callback_handler() -> AuthorizationCodeResult:
        query = await asyncio.wait_for(callback, 120)
        if "code" not in query:
            raise RuntimeError(f"sign-in failed: {query}")
        first = lambda name: query.get(name, [None])[0]  # noqa: E731
        return AuthorizationCodeResult(code=first("code"), state=first("state"), iss=first("iss"))

    storage = MemoryStorage()
    provider = OAuthClientProvider(
        server_url=url,
        client_metadata=OAuthClientMetadata(
            client_name="Python MCP SDK client",
            redirect_uris=[redirect_uri],
            grant_types=["authorization_code", "refresh_token"],
            response_types=["code"],
            token_endpoint_auth_method="none",
        ),
        storage=storage,
        redirect_handler=redirect_handler,
        callback_handler=callback_handler,
    )
    async with create_mcp_http_client(auth=provider) as http:
        async with Client(streamable_http_client(url, http_client=http)) as client:
            result = await client.call_tool("applications", {})
            print(
                json.dumps(
                    {
                        "client_id": storage.client.client_id if storage.client else None,
                        "result": result.model_dump(mode="json", by_alias=True, exclude_none=True),
                    }
                ),
                flush=True,
            )
    server.close()


if __name__ == "__main__":
    asyncio.run(main(sys.argv[1]))
