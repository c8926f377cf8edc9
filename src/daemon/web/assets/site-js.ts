/**
 * The marketplace pages' one script (plain ES2017, no dependencies), a progressive
 * enhancement: every `button[data-copy]` (hidden in the HTML, so pages without scripts
 * show no dead button) appears and copies the text of the element it names. Kept free
 * of backticks so it can live in this template literal.
 */
export const SITE_JS = String.raw`(function () {
'use strict';
function say(msg) {
  var s = document.getElementById('copy-status');
  if (!s) return;
  s.textContent = '';
  setTimeout(function () { s.textContent = msg; }, 30);
}
function copy(btn) {
  var target = document.getElementById(btn.getAttribute('data-copy'));
  if (!target) return;
  var text = target.textContent;
  var done = function () { btn.textContent = 'Copied'; say('Copied to the clipboard.'); setTimeout(function () { btn.textContent = 'Copy'; }, 2000); };
  var select = function () { window.getSelection().selectAllChildren(target); say('Selected: press Ctrl+C to copy.'); };
  if (navigator.clipboard && window.isSecureContext) navigator.clipboard.writeText(text).then(done, select);
  else select();
}
document.addEventListener('DOMContentLoaded', function () {
  Array.prototype.forEach.call(document.querySelectorAll('button[data-copy]'), function (btn) {
    btn.hidden = false;
    btn.addEventListener('click', function () { copy(btn); });
  });
});
})();
`;
