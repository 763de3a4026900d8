// The sign-in link carries a one-time code in its fragment (never sent to a server or in
// a Referer). Exchange it, by POST from this page, for the bridge's HttpOnly cookie.
'use strict';

(async function signIn() {
  const state = document.getElementById('login-state');
  const fragment = location.hash.slice(1);
  // The code leaves the address bar and the history entry at once.
  history.replaceState(null, '', location.pathname);
  // A code is 64 hex digits; anything else (a `#review-3` of an expired sign-in) is not.
  if (!/^[0-9a-f]{64}$/.test(fragment)) {
    state.textContent = 'Not signed in.';
    return;
  }
  const code = fragment;
  // While a code is being exchanged, only its progress shows; how to get a code
  // comes back when it is refused.
  const help = document.getElementById('login-help');
  help.hidden = true;
  try {
    const answer = await fetch('/ui/login', {
      method: 'POST',
      headers: { 'Content-Type': 'application/json' },
      body: JSON.stringify({ code }),
      credentials: 'same-origin',
    });
    if (answer.ok) {
      state.textContent = 'Signed in. Opening the dashboard…';
      location.replace('/ui/');
      return;
    }
    const body = await answer.json().catch(() => ({}));
    state.textContent = body.error || `Sign-in refused (HTTP ${answer.status}).`;
    state.classList.add('error');
    help.hidden = false;
  } catch (e) {
    state.textContent = `The bridge did not answer: ${e.message}`;
    state.classList.add('error');
    help.hidden = false;
  }
})();
