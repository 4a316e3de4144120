/*
 * Tells the shop the browser's time zone, once per session (the server renders every time in it).
 * The page says which zone it was rendered in (<meta name="shop-zone">); when that is not the browser's,
 * the zone is posted to /zone and the next page shows it. <html data-zone-reported> is set when done
 * (to the zone, or "failed").
 */
(function () {
  'use strict';

  function meta(name) {
    var m = document.querySelector('meta[name="' + name + '"]');
    return m ? m.getAttribute('content') : null;
  }

  var root = document.documentElement;
  var zone;
  try {
    zone = Intl.DateTimeFormat().resolvedOptions().timeZone;
  } catch (e) {
    zone = null;
  }
  if (!zone || zone === meta('shop-zone')) {
    root.setAttribute('data-zone-reported', zone || 'unknown');
    return;
  }
  var body = new URLSearchParams();
  body.append('zone', zone);
  if (meta('shop-csrf-parameter') && meta('shop-csrf-token')) {
    body.append(meta('shop-csrf-parameter'), meta('shop-csrf-token'));
  }
  fetch(meta('shop-zone-url') || '/zone', {method: 'POST', body: body, credentials: 'same-origin', redirect: 'manual'})
    .then(function (response) {
      root.setAttribute('data-zone-reported', response.status === 204 ? zone : 'failed');
    }, function () {
      root.setAttribute('data-zone-reported', 'failed');
    });
})();

/*
 * The edit page: tells a reload or a language switch of this tab from a second tab. Each tab remembers
 * (sessionStorage: per tab, kept across reloads) the grant of the edit lock its page got; when opening
 * the page replaced this admin's earlier grant, the "already editing in another tab" note is shown only
 * if that grant was not this tab's own. <html data-tab-checked> is set when done.
 */
(function () {
  'use strict';

  var form = document.querySelector('[data-shop-edit-grant]');
  if (!form) {
    return;
  }
  var key = 'shop-edit-grant:' + form.getAttribute('data-shop-edit-order');
  var mine = null;
  try {
    mine = window.sessionStorage.getItem(key);
    window.sessionStorage.setItem(key, form.getAttribute('data-shop-edit-grant'));
  } catch (e) {
    mine = null; // no storage: warn, as for a second tab
  }
  var note = document.getElementById('other-tab');
  if (note && (mine === null || mine !== note.getAttribute('data-replaced-grant'))) {
    note.hidden = false;
  }
  document.documentElement.setAttribute('data-tab-checked', note && !note.hidden ? 'other-tab' : 'this-tab');
})();

/*
 * The edit page, once its lock is lost (heartbeat.js's holdfast:lock-lost): offers to open the page again
 * with a new lock and the typed changes filled in. Only fields whose value differs from what the page
 * showed (its seen-* fields) travel, so nobody else's change in between is overwritten.
 */
(function () {
  'use strict';

  var reopen = document.getElementById('reopen-form');
  var edit = document.getElementById('edit-form');
  if (!reopen || !edit) {
    return;
  }

  function values(form, name) {
    return Array.prototype.map.call(form.querySelectorAll('[name="' + name + '"]'), function (input) {
      return input.value;
    });
  }

  document.addEventListener('holdfast:lock-lost', function () {
    reopen.hidden = false;
  });
  reopen.addEventListener('submit', function () {
    Array.prototype.forEach.call(reopen.querySelectorAll('input[data-typed]'), function (old) {
      old.remove();
    });
    ['receiverName', 'receiverPhone', 'quantity'].forEach(function (name) {
      var typed = values(edit, name);
      if (typed.join('\u001F') === values(edit, 'seen-' + name).join('\u001F')) {
        return;
      }
      typed.forEach(function (value) {
        var input = document.createElement('input');
        input.type = 'hidden';
        input.name = name;
        input.value = value;
        input.setAttribute('data-typed', '');
        reopen.appendChild(input);
      });
    });
  });
})();
