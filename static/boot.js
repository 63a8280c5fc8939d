// Starts the dashboard. A file rather than an inline script, so that the Content-Security-Policy can
// forbid inline scripts.
import init from '/pkg/winplace_dashboard.js';
init({ module_or_path: '/pkg/winplace_dashboard_bg.wasm' });
