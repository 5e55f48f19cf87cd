// Content-script loader (a classic script, in every frame). The Rust page module is imported
// on the first request only, so pages Nova never works on pay nothing.
//
// Chromium applies the page's CSP to WebAssembly compiled here, so on pages whose CSP forbids
// it (the background tells us about CSP headers; CSP meta tags are visible in the DOM) the
// JavaScript translation of the same module is imported instead, without ever trying the
// WebAssembly build: a failed try would fire a securitypolicyviolation event at the page.
(() => {
  if (globalThis.__novaContent) return;
  globalThis.__novaContent = true;
  const firefox = chrome.runtime.getURL('').startsWith('moz-extension:');
  const cspMeta = () => document.querySelector(
    'meta[http-equiv="content-security-policy" i], meta[http-equiv="content-security-policy-report-only" i]',
  ) !== null;
  let loading = null;
  const jsBuild = () => import(chrome.runtime.getURL('pkg-js/nova_extension.js'));
  const load = (strictCsp) => loading ??= (async () => {
    if (!firefox && (strictCsp || cspMeta())) return jsBuild();
    const m = await import(chrome.runtime.getURL('pkg/nova_extension.js'));
    try {
      await m.default({ module_or_path: chrome.runtime.getURL('pkg/nova_extension_bg.wasm') });
      return m;
    } catch (e) {
      // A CSP the background did not see (a missed header event) still must not stop Nova.
      if (firefox) throw e;
      return jsBuild();
    }
  })();
  chrome.runtime.onMessage.addListener((msg, _sender, sendResponse) => {
    if (!msg || msg.nova !== 1) return false;
    load(msg.strictCsp === true).then(
      (m) => Promise.resolve(m.content_handle(msg)).then(sendResponse),
      (e) => sendResponse({ err: { code: 'page_script_unavailable', message: String((e && e.message) || e) } }),
    );
    return true;
  });
})();
