// Loads the Rust module and forwards browser events to it. Listeners are registered here,
// synchronously, so that they also wake a stopped service worker.
import init, { bg_start, bg_event, bg_ui } from './pkg/nova_extension.js';

const ready = init({ module_or_path: chrome.runtime.getURL('pkg/nova_extension_bg.wasm') })
  .then(() => bg_start());
const forward = (name) => (detail) => { ready.then(() => bg_event(name, detail ?? {})); };

chrome.runtime.onStartup.addListener(() => {});
// First install: the settings page says whether the host is connected and how to connect an
// agent. Opened in the background so it does not take the person's current tab.
chrome.runtime.onInstalled.addListener((details) => {
  if (details.reason === 'install') chrome.tabs.create({ url: 'options.html#welcome', active: false });
});
chrome.tabs.onCreated.addListener((tab) => forward('tabs')({ tabId: tab.id }));
chrome.tabs.onUpdated.addListener((tabId, info) => {
  if (info.url || info.title || info.status === 'complete') forward('tabs')({ tabId });
});
chrome.tabs.onActivated.addListener((info) => forward('tabs')({ tabId: info.tabId }));
chrome.tabs.onRemoved.addListener((tabId) => forward('removed')({ tabId }));
chrome.windows.onFocusChanged.addListener(() => forward('tabs')({}));
chrome.webNavigation.onCommitted.addListener(forward('committed'));
chrome.webNavigation.onCompleted.addListener(forward('completed'));
chrome.webNavigation.onErrorOccurred.addListener(forward('navError'));
chrome.webNavigation.onReferenceFragmentUpdated.addListener(forward('sameDoc'));
chrome.webNavigation.onHistoryStateUpdated.addListener(forward('sameDoc'));
// Response headers of documents, to know whether their CSP forbids WebAssembly.
chrome.webRequest.onHeadersReceived.addListener(
  forward('headers'),
  { urls: ['<all_urls>'], types: ['main_frame', 'sub_frame'] },
  ['responseHeaders'],
);
// The browser asks for an HTTP sign-in in a dialog of its own, which no page sees. The end of
// those requests (answered, refused, given up) is listened for only while one waits: listening
// to every request's end would wake the worker for each image of every page. Firefox fires the
// event only to a blocking listener; this one returns nothing, so the browser asks the person
// as it would without Nova (Chromium takes no blocking listener here, and needs none).
const signIns = new Set();
const requestFilter = { urls: ['<all_urls>'] };
const firefox = chrome.runtime.getURL('').startsWith('moz-extension:');
const signInDone = (detail) => {
  if (!signIns.delete(detail.requestId)) return;
  forward('signInDone')(detail);
  if (signIns.size === 0) {
    chrome.webRequest.onCompleted.removeListener(signInDone);
    chrome.webRequest.onErrorOccurred.removeListener(signInDone);
  }
};
chrome.webRequest.onAuthRequired.addListener((detail) => {
  if (signIns.size === 0) {
    chrome.webRequest.onCompleted.addListener(signInDone, requestFilter);
    chrome.webRequest.onErrorOccurred.addListener(signInDone, requestFilter);
  }
  signIns.add(detail.requestId);
  forward('signIn')(detail);
}, requestFilter, firefox ? ['blocking'] : []);
// Requests from the extension's own pages (popup, options, prompt) only: content scripts run
// next to web pages and never get the person's controls.
chrome.runtime.onMessage.addListener((msg, sender, sendResponse) => {
  const own = sender.id === chrome.runtime.id && (sender.url || '').startsWith(chrome.runtime.getURL(''));
  if (!msg || msg.novaUi !== 1 || !own) return false;
  ready.then(() => bg_ui(msg)).then(sendResponse, (e) => sendResponse({ ok: false, code: 'internal', message: String(e) }));
  return true;
});
