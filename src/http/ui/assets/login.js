// The sign-in link carries a one-time code in its fragment (never sent to a server or in
// a Referer). Exchange it, by POST from this page, for the bridge's HttpOnly cookie.
'use strict';

(async function signIn() {
  const state = document.getElementById('login-state');
  const code = decodeURIComponent(location.hash.slice(1));
  // The code leaves the address bar and the history entry at once.
  history.replaceState(null, '', location.pathname);
  if (!code) {
    state.textContent = 'Not signed in.';
    return;
  }
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
  } catch (e) {
    state.textContent = `The bridge did not answer: ${e.message}`;
    state.classList.add('error');
  }
})();
