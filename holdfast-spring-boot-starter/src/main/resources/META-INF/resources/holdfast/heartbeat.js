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
 *      data-holdfast-expires-at="2026-11-23T14:05:00Z"              optional: the expiry (ISO-8601), for <time datetime>
 *      data-holdfast-expires-text="15:05:00 CET"                    optional: the expiry as the page shows times
 *      data-holdfast-expires-title="2026-11-23 14:05:00 UTC"        optional: its hover title (none if absent)
 *      data-holdfast-time-class="instant"                           optional: the class of the <time> elements
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
 * on the page (same zone, same format); without those it falls back to the browser's local time. It is
 * a <time datetime="…ISO…"> element with the hover title the server gives (data-holdfast-expires-title,
 * then expiresAtTitle), and so is the time a lost lock ended (a refusal's endedAtText within its
 * reason, with endedAt and endedAtTitle). The texts are filled in as DOM nodes (createElement,
 * textContent), never as HTML; the held line is updated in place, so a hover title stays open.
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
  var expiresAt = el.getAttribute('data-holdfast-expires-at');
  var expiresText = el.getAttribute('data-holdfast-expires-text');
  var expiresTitle = el.getAttribute('data-holdfast-expires-title');
  var timeClass = el.getAttribute('data-holdfast-time-class');
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

  var shown = null; // what the text element shows: {name: text name, nodes: {placeholder: [node, …]}}

  /*
   * Shows text `name` with its placeholders filled: a value that is a Node as a copy of it (each place
   * its own), anything else as a text node. Remembers the nodes put in, for showHeld to update.
   */
  function show(name, values) {
    var template = texts[name];
    var pattern = /\{(until|left|reason)\}/g;
    var nodes = {};
    var last = 0;
    var match;
    text.textContent = '';
    while ((match = pattern.exec(template)) !== null) {
      text.appendChild(document.createTextNode(template.slice(last, match.index)));
      var value = values[match[1]];
      var node = value instanceof Node ? value.cloneNode(true)
          : document.createTextNode(value == null ? '' : String(value));
      if (node.nodeType === Node.DOCUMENT_FRAGMENT_NODE) {
        Array.prototype.forEach.call(node.childNodes, remember(match[1], nodes));
      } else {
        remember(match[1], nodes)(node);
      }
      text.appendChild(node);
      last = pattern.lastIndex;
    }
    text.appendChild(document.createTextNode(template.slice(last)));
    shown = {name: name, nodes: nodes};
  }

  function remember(placeholder, nodes) {
    return function (node) {
      (nodes[placeholder] = nodes[placeholder] || []).push(node);
    };
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

  /* A <time> element: datetime `iso`, text `shown`, hover title `title` (none if null). */
  function timeElement(iso, shown, title) {
    var time = document.createElement('time');
    if (timeClass) {
      time.className = timeClass;
    }
    setTime(time, iso, shown, title);
    return time;
  }

  /* Sets what a <time> shows, touching only what changed (an open hover title stays open). */
  function setTime(time, iso, shown, title) {
    if (time.getAttribute('datetime') !== iso) {
      time.setAttribute('datetime', iso);
    }
    if (time.textContent !== shown) {
      time.textContent = shown;
    }
    if (title && time.getAttribute('title') !== title) {
      time.setAttribute('title', title);
    } else if (!title && time.hasAttribute('title')) {
      time.removeAttribute('title');
    }
  }

  /* The expiry: as the server gave it, else the browser's local time of the time left from now. */
  function until() {
    var at = expiresAt ? new Date(expiresAt) : new Date(Date.now() + left() * 1000);
    var iso = expiresAt || at.toISOString().replace(/\.\d+Z$/, 'Z');
    var local = at.toLocaleTimeString([], {hour: '2-digit', minute: '2-digit', second: '2-digit'});
    return {iso: iso, text: expiresText || local, title: expiresText ? expiresTitle : null};
  }

  function showHeld() {
    var at = until();
    if (shown && shown.name === 'held') {
      (shown.nodes.until || []).forEach(function (time) {
        setTime(time, at.iso, at.text, at.title);
      });
      (shown.nodes.left || []).forEach(function (node) {
        node.nodeValue = clock(left());
      });
      return;
    }
    show('held', {until: timeElement(at.iso, at.text, at.title), left: clock(left())});
  }

  /*
   * A refusal's reason; where it names the time the lock ended as the server formats it (endedAtText,
   * given with endedAt), that time is a <time> element.
   */
  function reasonOf(answer, reason) {
    var at = answer.endedAtText;
    var i = at && answer.endedAt ? reason.indexOf(at) : -1;
    if (i < 0) {
      return reason;
    }
    var nodes = document.createDocumentFragment();
    nodes.appendChild(document.createTextNode(reason.slice(0, i)));
    nodes.appendChild(timeElement(answer.endedAt, at, answer.endedAtTitle || null));
    nodes.appendChild(document.createTextNode(reason.slice(i + at.length)));
    return nodes;
  }

  /* `reason`: the reason as text; `shownReason`: as shown, text or nodes (by default the text). */
  function loseLock(reason, shownReason) {
    if (lost) {
      return;
    }
    lost = true;
    stop();
    state('lost');
    show('lost', {reason: shownReason || reason});
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
          expiresTitle = answer.expiresAtTitle || null;
          state('held');
          showHeld();
        } else {
          var byCode = answer.code && el.getAttribute('data-holdfast-text-code-' + answer.code);
          var reason = byCode || answer.detail || answer.title || texts.refused;
          loseLock(reason, byCode ? reason : reasonOf(answer, reason));
        }
      });
    }).catch(function () {
      if (!lost) {
        state('warning');
        show('warning', {left: clock(left())});
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
