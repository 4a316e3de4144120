/*
 * Holdfast offline lock heartbeat: keeps the lock of an open edit page alive, shows the time left,
 * and warns visibly when the lock is lost. Served by holdfast-spring-boot-starter as /holdfast/heartbeat.js.
 *
 * <div id="holdfast-lock"
 *      data-holdfast-heartbeat="/admin/orders/42/edit/heartbeat"   POST endpoint (LockHeartbeat.extend)
 *      data-holdfast-lock-id="…"                                    the LockId (also in the form's hidden field)
 *      data-holdfast-interval-seconds="60"                          LockHeartbeat.interval()
 *      data-holdfast-seconds-left="300"                             LockHeartbeat.status(...).secondsLeft()
 *      data-holdfast-csrf-parameter="_csrf" data-holdfast-csrf-token="…"
 *      data-holdfast-expires-text="15:05:00 CET"                    optional: the expiry as the page shows times
 *      data-holdfast-text-held="… {until} … {left} …"               optional texts in the page's language
 *      data-holdfast-text-warning="… {left} …"                     (the English defaults are below)
 *      data-holdfast-text-lost="… {reason} …"
 *      data-holdfast-text-expired="…" data-holdfast-text-signed-out="…" data-holdfast-text-refused="…"
 *      data-holdfast-text-code-no-lock="…"                         optional: the reason for a refusal with
 *                                                                   that problem code (else its detail)>
 *   <span data-holdfast-lock-text>…</span>
 * </div>
 * <script src="/holdfast/heartbeat.js" defer></script>
 *
 * The element gets class holdfast-lock-held, holdfast-lock-warning (a beat failed to reach the server;
 * retrying) or holdfast-lock-lost; submit buttons marked data-holdfast-requires-lock are disabled when
 * the lock is lost. The time left comes from the server (database time) and is counted down with the
 * page's monotonic clock, so a wrong clock on the user's machine does not matter.
 * The expiry is shown as the server formats it (data-holdfast-expires-text, then each beat's
 * expiresAtText from LockHeartbeat.extend with a display function), so it reads like every other time
 * on the page (same zone, same format); without those it falls back to the browser's local time.
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
  var expiresText = el.getAttribute('data-holdfast-expires-text');
  var texts = {
    held: 'You hold the edit lock until about {until} ({left} left); it is extended automatically while this page is open.',
    warning: 'Could not reach the server to extend the edit lock; retrying. {left} left unless it succeeds.',
    lost: 'Your edit lock is lost: {reason} Your changes can no longer be saved. Copy anything you need, then reload the page.',
    expired: 'it expired because the page could not extend it in time.',
    'signed-out': 'the server no longer accepts this page (signed out?).',
    refused: 'the server refused to extend it.'
  };
  Object.keys(texts).forEach(function (name) {
    var given = el.getAttribute('data-holdfast-text-' + name);
    if (given) {
      texts[name] = given;
    }
  });

  function say(name, values) {
    return texts[name].replace(/\{(until|left|reason)\}/g, function (all, key) {
      return values[key];
    });
  }
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
    if (expiresText) {
      return expiresText;
    }
    var at = expiresAt ? new Date(expiresAt) : new Date(Date.now() + left() * 1000);
    return at.toLocaleTimeString([], {hour: '2-digit', minute: '2-digit', second: '2-digit'});
  }

  function showHeld() {
    text.textContent = say('held', {until: until(), left: clock(left())});
  }

  function loseLock(reason) {
    if (lost) {
      return;
    }
    lost = true;
    stop();
    state('lost');
    text.textContent = say('lost', {reason: reason});
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
      loseLock(texts.expired);
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
        loseLock(texts['signed-out']);
        return;
      }
      return response.json().then(function (answer) {
        if (response.ok && answer.held) {
          deadline = performance.now() + answer.secondsLeft * 1000;
          expiresAt = answer.expiresAt;
          expiresText = answer.expiresAtText || null;
          state('held');
          showHeld();
        } else {
          var byCode = answer.code && el.getAttribute('data-holdfast-text-code-' + answer.code);
          loseLock(byCode || answer.detail || answer.title || texts.refused);
        }
      });
    }).catch(function () {
      if (!lost) {
        state('warning');
        text.textContent = say('warning', {left: clock(left())});
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
