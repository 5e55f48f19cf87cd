// Loader of the extension's own pages: the Rust module draws and runs them (src/ui.rs).
import init, { ui_main } from './pkg/nova_extension.js';

await init({ module_or_path: chrome.runtime.getURL('pkg/nova_extension_bg.wasm') });
ui_main(document.body.dataset.page);
