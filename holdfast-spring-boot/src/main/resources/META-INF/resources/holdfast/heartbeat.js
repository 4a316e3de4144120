/*
 * Holdfast offline lock heartbeat: keeps the lock of an open edit page alive, shows the time left,
 * and warns visibly when the lock is lost. Served by holdfast-spring-boot as /holdfast/heartbeat.js.
 *
 * <div id="holdfast-lock"
 *      data-holdfast-heartbeat="/admin/orders/42/edit/heartbeat"   POST endpoint (LockHeartbeat.extend)
 *      data-holdfast-lock-id="…"                                    the LockId (also in the form's hidden field)
 *      data-holdfast-interval-seconds="60"                          LockHeartbeat.interval()
 *      data-holdfast-seconds-left="300"                             LockHeartbeat.status(...).secondsLeft()
 *      data-holdfast-csrf-parameter="_csrf" data-holdfast-csrf-token="…">
 *   <span data-holdfast-lock-text>…</span>
 * </div>
 * <script src="/holdfast/heartbeat.js" defer></script>
 *
 * The element gets class holdfast-lock-held, holdfast-lock-warning (a beat failed to reach the server;
 * retrying) or holdfast-lock-lost; submit buttons marked data-holdfast-requires-lock are disabled when
 * the lock is lost. The time left comes from the server (database time) and is counted down with the
 * page's monotonic clock, so a wrong clock on the user's machine does not matter.
 * window.holdfastHeartbeat.stop() stops beating (as a suspended laptop would).
 */
(function () {
  'use strict';

  var el = document.getElementById('holdfast-lock');
  if (!el) {
    return;
  }
  var url = el.getAttribute('data-holdfast-heartbeat');
  var lockId = el.getAttribute('data-holdfast-lock-id');
  var intervalMs = Math.max(1, Number(el.getAttribute('data-holdfast-interval-seconds'))) * 1000;
  var csrfParameter = el.getAttribute('data-holdfast-csrf-parameter');
  var csrfToken = el.getAttribute('data-holdfast-csrf-token');
  var text = el.querySelector('[data-holdfast-lock-text]') || el;
  var deadline = performance.now() + Number(el.getAttribute('data-holdfast-seconds-left')) * 1000;
  var expiresAt = null;
  var lost = false;
  var beatTimer = null;
  var tickTimer = null;

  function state(name) {
    el.classList.remove('holdfast-lock-held', 'holdfast-lock-warning', 'holdfast-lock-lost');
    el.classList.add('holdfast-lock-' + name);
    el.setAttribute('data-holdfast-state', name);
  }

  function left() {
    return Math.max(0, Math.round((deadline - performance.now()) / 1000));
  }

  function clock(seconds) {
    var m = Math.floor(seconds / 60);
    var s = seconds % 60;
    return m + ':' + (s < 10 ? '0' : '') + s;
  }

  function until() {
    var at = expiresAt ? new Date(expiresAt) : new Date(Date.now() + left() * 1000);
    return at.toLocaleTimeString([], {hour: '2-digit', minute: '2-digit', second: '2-digit'});
  }

  function showHeld() {
    text.textContent = 'You hold the edit lock until about ' + until() + ' (' + clock(left())
        + ' left); it is extended automatically while this page is open.';
  }

  function loseLock(reason) {
    if (lost) {
      return;
    }
    lost = true;
    stop();
    state('lost');
    text.textContent = 'Your edit lock is lost: ' + reason
        + ' Your changes can no longer be saved. Copy anything you need, then reload the page.';
    var buttons = document.querySelectorAll('[data-holdfast-requires-lock]');
    for (var i = 0; i < buttons.length; i++) {
      buttons[i].disabled = true;
    }
    el.dispatchEvent(new CustomEvent('holdfast:lock-lost', {bubbles: true, detail: {reason: reason}}));
  }

  function tick() {
    if (lost) {
      return;
    }
    if (left() === 0) {
      loseLock('it expired because the page could not extend it in time.');
    } else if (el.getAttribute('data-holdfast-state') !== 'warning') {
      showHeld();
    }
  }

  function beat() {
    var body = new URLSearchParams();
    body.append('lockId', lockId);
    if (csrfParameter && csrfToken) {
      body.append(csrfParameter, csrfToken);
    }
    return fetch(url, {
      method: 'POST',
      body: body,
      credentials: 'same-origin',
      headers: {'Accept': 'application/json'},
      redirect: 'manual'
    }).then(function (response) {
      var type = response.headers.get('Content-Type') || '';
      if (response.type === 'opaqueredirect' || type.indexOf('json') < 0) {
        // a redirect to a login page, or an error page: the session is gone
        loseLock('the server no longer accepts this page (signed out?).');
        return;
      }
      return response.json().then(function (answer) {
        if (response.ok && answer.held) {
          deadline = performance.now() + answer.secondsLeft * 1000;
          expiresAt = answer.expiresAt;
          state('held');
          showHeld();
        } else {
          loseLock(answer.detail || answer.title || 'the server refused to extend it.');
        }
      });
    }).catch(function () {
      if (!lost) {
        state('warning');
        text.textContent = 'Could not reach the server to extend the edit lock; retrying. '
            + clock(left()) + ' left unless it succeeds.';
      }
    });
  }

  function stop() {
    clearInterval(beatTimer);
    beatTimer = null;
    if (lost) {
      clearInterval(tickTimer);
    }
  }

  state('held');
  showHeld();
  beatTimer = setInterval(beat, intervalMs);
  tickTimer = setInterval(tick, 250);
  window.holdfastHeartbeat = {beat: beat, stop: stop};
})();
