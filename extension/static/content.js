// Content-script loader (a classic script, in every frame). The Rust page module is imported
// on the first request only, so pages Nova never works on pay nothing.
(() => {
  if (globalThis.__novaContent) return;
  globalThis.__novaContent = true;
  let loading = null;
  const load = () => loading ??= import(chrome.runtime.getURL('pkg/nova_extension.js'))
    .then(async (m) => {
      await m.default({ module_or_path: chrome.runtime.getURL('pkg/nova_extension_bg.wasm') });
      return m;
    });
  chrome.runtime.onMessage.addListener((msg, _sender, sendResponse) => {
    if (!msg || msg.nova !== 1) return false;
    load().then(
      (m) => sendResponse(m.content_handle(msg)),
      (e) => sendResponse({ err: { code: 'page_script_unavailable', message: String((e && e.message) || e) } }),
    );
    return true;
  });
})();
