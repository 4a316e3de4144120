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
