"""Access to the page: the one-time link signs a browser in once; without the cookie
every page and API answers 401 with no data; a foreign Host and cross-origin or
Origin-less state changes are refused."""

import json

import pytest

from conftest import wait_for

pytestmark = pytest.mark.anyio

PAGES = ["/ui/", "/ui", "/ui/assets/app.js"]
APIS = [
    "/ui/api/status",
    "/ui/api/activity",
    "/ui/api/events",
    "/ui/api/tasks",
    "/ui/api/samples",
    "/ui/api/diffs",
    "/ui/api/approvals",
    "/ui/api/reviews",
    "/ui/api/reviews/1",
    "/ui/api/reviews/1/excerpt?ref=0",
    "/ui/api/tasks/x/output",
]
POSTS = [
    "/ui/api/diffs/1",
    "/ui/api/approvals/1",
    "/ui/api/tasks/x/cancel",
    "/ui/api/reviews/1/commit",
    "/ui/api/open",
    "/ui/api/mention",
    "/ui/logout",
]


async def cookie_header(browser, bridge):
    cookies = await browser.context.cookies(bridge.origin + "/ui/")
    assert len(cookies) == 1, cookies
    c = cookies[0]
    assert c["name"] == f"ide_bridge_ui_{bridge.port}"
    assert c["httpOnly"] and c["sameSite"] == "Strict" and c["path"] == "/ui", c
    return f"{c['name']}={c['value']}"


async def test_a_link_signs_in_once_and_a_second_use_fails(bridge, browser):
    link = bridge.open_link()
    assert link.startswith(f"{bridge.origin}/ui/login#"), link
    page = await browser.page()
    await page.goto(link)
    await page.wait_for_url(f"{bridge.origin}/ui/")
    await page.wait_for_selector("body.ready")
    assert await page.text_content("#ws-name") == str(bridge.workspace)
    # The code does not stay in the address or the history.
    assert "#" not in page.url
    await browser.shot(page, "signed-in")
    assert bridge.status()["page"]["signedIn"] == 1

    # The same link in another browser: refused, and it says how to get a new one.
    other = await browser.new_context()
    page2 = await other.new_page()
    await page2.goto(link)
    await page2.wait_for_selector("#login-state.error")
    text = await page2.text_content("#login-state")
    assert "not valid" in text and "ide-bridge open" in text, text
    # Refused, the page says how to get a link; it never says both at once.
    assert await page2.is_visible("#login-help")
    assert await other.cookies(bridge.origin + "/ui/") == []
    await browser.shot(page2, "link-used-twice")
    # And the API says the same to a direct POST.
    code = link.split("#", 1)[1]
    status, _, body = bridge.http("POST", "/ui/login", {"Origin": bridge.origin}, {"code": code})
    assert status == 401 and "not valid" in body, body
    await other.close()


async def test_without_the_cookie_every_page_and_api_answers_401_and_no_data(bridge, browser):
    page = await browser.sign_in(bridge)
    cookie = await cookie_header(browser, bridge)
    secret_bits = [str(bridge.workspace), bridge.token]
    for path in PAGES + APIS:
        status, headers, body = bridge.http("GET", path)
        assert status == 401, (path, status, body)
        assert not any(s in body for s in secret_bits), (path, body)
        # A wrong cookie is no better.
        status, _, _ = bridge.http("GET", path, {"Cookie": f"ide_bridge_ui_{bridge.port}=forged"})
        assert status == 401, path
    for path in POSTS:
        status, _, body = bridge.http("POST", path, {"Origin": bridge.origin}, {})
        assert status == 401, (path, status, body)
    # The same requests with the browser's cookie get data.
    status, headers, body = bridge.http("GET", "/ui/api/status", {"Cookie": cookie})
    assert status == 200 and json.loads(body)["workspace"] == str(bridge.workspace)
    assert "default-src 'none'" in headers["Content-Security-Policy"]
    assert headers["X-Frame-Options"] == "DENY"
    # The unauthenticated page is the login page, which holds no data.
    await page.context.clear_cookies()
    await page.goto(f"{bridge.origin}/ui/")
    await page.wait_for_selector("#login-state")
    assert await page.text_content("#login-state") == "Not signed in."
    await browser.shot(page, "not-signed-in")


async def test_a_foreign_host_and_cross_origin_state_changes_are_refused(bridge, browser):
    await browser.sign_in(bridge)
    cookie = await cookie_header(browser, bridge)
    status, _, body = bridge.http("GET", "/ui/api/status", {"Cookie": cookie, "Host": "evil.example"})
    assert status == 403 and "evil.example" in body, body
    status, _, _ = bridge.http("GET", "/ui/", {"Cookie": cookie, "Host": f"evil.example:{bridge.port}"})
    assert status == 403
    # A page of another origin (or one that hides it) cannot change anything.
    for origin in ("http://evil.example", f"http://127.0.0.1:{bridge.port + 1}", "null"):
        status, _, body = bridge.http("POST", "/ui/api/approvals/1", {"Cookie": cookie, "Origin": origin}, {"allow": True})
        assert status == 403, (origin, body)
    status, _, body = bridge.http("POST", "/ui/api/approvals/1", {"Cookie": cookie}, {"allow": True})
    assert status == 403 and "Origin" in body, body
    # Signing in needs the page's own origin too.
    code = bridge.open_link().split("#", 1)[1]
    status, _, _ = bridge.http("POST", "/ui/login", {"Origin": "http://evil.example"}, {"code": code})
    assert status == 403
    # Nothing that changes state answers a GET.
    for path in ("/ui/api/approvals/1", "/ui/api/diffs/1", "/ui/api/tasks/x/cancel", "/ui/logout", "/ui/login-code"):
        status, _, _ = bridge.http("GET", path, {"Cookie": cookie})
        assert status in (404, 405), (path, status)
    # The same-origin request is let through (and answers that nothing waits).
    status, _, body = bridge.http("POST", "/ui/api/approvals/1", {"Cookie": cookie, "Origin": bridge.origin}, {"allow": True})
    assert status == 409, body
    # A sign-in link needs the lock file's token.
    status, _, _ = bridge.http("POST", "/ui/login-code")
    assert status == 401
    # Another page of this host (another port: same-site) sends the cookie on its image
    # requests, without an Origin; the browser says where they come from.
    status, _, body = bridge.http("GET", "/ui/api/events", {"Cookie": cookie, "Sec-Fetch-Site": "same-site"})
    assert status == 403 and "Sec-Fetch-Site" in body, body
    status, _, _ = bridge.http("GET", "/ui/api/status", {"Cookie": cookie, "Sec-Fetch-Site": "same-origin"})
    assert status == 200


async def test_signing_out_ends_the_session(bridge, browser):
    page = await browser.sign_in(bridge)
    cookie = await cookie_header(browser, bridge)
    await page.click("#signout")
    await page.wait_for_url(f"{bridge.origin}/ui/login")
    status, _, _ = bridge.http("GET", "/ui/api/status", {"Cookie": cookie})
    assert status == 401
    await wait_for(lambda: bridge.status()["page"]["signedIn"] == 0, "the sign-in to end")
