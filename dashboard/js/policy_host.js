// A waPC host for Kubewarden policies in the browser: loads a policy module with the WebAssembly API and
// calls it the way Kubewarden's policy-server does (wapc_init, then `protocol_version`,
// `validate_settings` and `validate` through the waPC protocol), answering the guest's host calls with a
// callback the page provides.
//
// Why a file of our own: the npm package `@wapc/host` (0.0.3) cannot instantiate a Rust wasm32-wasip1 guest
// (it provides neither `random_get`, `environ_*` nor `proc_exit`), returns a byte count where WASI wants
// an errno from `fd_write`, and compiles the module again for every instance.
//
// The waPC protocol (https://wapc.io/docs/spec/), as wasmtime-provider implements it for policy-server:
// the host calls `__guest_call(operation_len, payload_len)`; the guest calls back `__guest_request` for
// the host to write the operation and the payload into its memory, then `__guest_response` or
// `__guest_error`; the call returns 1 on success. A guest's host call goes through `__host_call(binding,
// namespace, operation, payload)`, answered 1 (then `__host_response_len`/`__host_response`) or 0 (then
// `__host_error_len`/`__host_error`).

const encoder = new TextEncoder();
const decoder = new TextDecoder();

/** The custom section `kwctl annotate` writes the policy's metadata (JSON) into. */
export const METADATA_SECTION = 'io.kubewarden.metadata';

/** WASI preview 1 errno values used here. */
const ERRNO_SUCCESS = 0;
const ERRNO_BADF = 8;
const ERRNO_INVAL = 28;

/** Thrown by the guest's `proc_exit`: the instance is finished. */
class ProcExit extends Error {
  constructor(code) {
    super(`the policy exited with code ${code}`);
    this.code = code;
  }
}

// Compiled modules by URL: a page compiles each module once, however often its views mount.
const compiled = new Map();

/**
 * Compiles the module at `url` with streaming compilation (once per page and URL) and describes it.
 * Resolves to a policy handle for `policyIdentity` and `policyCall`.
 */
export function loadPolicyUrl(url) {
  if (!compiled.has(url)) {
    compiled.set(url, fetchAndCompile(url).catch((e) => {
      compiled.delete(url);
      throw e;
    }));
  }
  return compiled.get(url);
}

async function fetchAndCompile(url) {
  const response = await fetch(url);
  if (!response.ok) throw new Error(`${url}: the server answered ${response.status}`);
  const copy = response.clone();
  const [module, bytes] = await Promise.all([
    WebAssembly.compileStreaming(response).catch(async (e) => {
      // compileStreaming needs `Content-Type: application/wasm`; any other server still works, slower.
      if (e instanceof TypeError) return WebAssembly.compile(await copy.clone().arrayBuffer());
      throw e;
    }),
    copy.arrayBuffer(),
  ]);
  return describe(module, new Uint8Array(bytes), url);
}

/** Compiles a module the user dropped in (`bytes`: an ArrayBuffer or Uint8Array) and describes it. */
export async function loadPolicyBytes(bytes, name) {
  const view = bytes instanceof Uint8Array ? bytes : new Uint8Array(bytes);
  let module;
  try {
    module = await WebAssembly.compile(view);
  } catch (e) {
    throw new Error(`${name}: not a WebAssembly module (${e.message})`);
  }
  return describe(module, view, name);
}

async function describe(module, bytes, source) {
  const missing = WebAssembly.Module.imports(module)
    .filter((i) => !provides(i))
    .map((i) => `${i.module}.${i.name}`);
  if (missing.length > 0) {
    throw new Error(`${source}: the module needs imports this host does not provide: ${missing.join(', ')}`);
  }
  const exported = new Set(WebAssembly.Module.exports(module).map((e) => e.name));
  for (const name of ['memory', '__guest_call']) {
    if (!exported.has(name)) throw new Error(`${source}: not a waPC module (it exports no ${name})`);
  }
  let metadata = null;
  const sections = WebAssembly.Module.customSections(module, METADATA_SECTION);
  if (sections.length > 0) {
    // A module annotated again carries several; the last one written is the one that counts.
    try {
      metadata = JSON.parse(decoder.decode(sections[sections.length - 1]));
    } catch (e) {
      throw new Error(`${source}: its ${METADATA_SECTION} section is not JSON (${e.message})`);
    }
  }
  return { module, source, size: bytes.length, sha256: await sha256(bytes), metadata, instance: null };
}

async function sha256(bytes) {
  // crypto.subtle exists only in secure contexts (https, localhost, 127.0.0.1).
  if (!globalThis.crypto?.subtle) return '';
  const digest = new Uint8Array(await crypto.subtle.digest('SHA-256', bytes));
  return Array.from(digest, (b) => b.toString(16).padStart(2, '0')).join('');
}

/**
 * What the user should know about a loaded policy: `{source, size, sha256, version, protocolVersion,
 * mutating, contextAwareResources, rules, imports}`; `version` comes from the metadata `kwctl annotate` embeds.
 */
export function policyIdentity(policy) {
  const m = policy.metadata ?? {};
  const annotations = m.annotations ?? {};
  return {
    source: policy.source,
    size: policy.size,
    sha256: policy.sha256,
    annotated: policy.metadata !== null,
    title: annotations['io.kubewarden.policy.title'] ?? '',
    version: annotations['io.kubewarden.policy.version'] ?? '',
    protocolVersion: m.protocolVersion ?? '',
    mutating: m.mutating === true,
    contextAwareResources: m.contextAwareResources ?? [],
    rules: m.rules ?? [],
    imports: WebAssembly.Module.imports(policy.module).map((i) => `${i.module}.${i.name}`),
  };
}

/**
 * Calls the guest's `operation` with `payload` (a string). `hostCall(binding, namespace, operation,
 * payload)` answers the guest's host calls with a string, or throws to refuse them (as policy-server does
 * for a capability it does not grant). Returns the guest's answer as a string; throws the guest's error.
 * The instance is kept for the next call (policy-server keeps its instances too) and made anew after a trap.
 */
export function policyCall(policy, operation, payload, hostCall) {
  if (policy.instance === null) policy.instance = new Instance(policy.module);
  const instance = policy.instance;
  try {
    return instance.call(operation, payload, hostCall);
  } catch (e) {
    if (!(e instanceof GuestError)) policy.instance = null;
    throw e;
  }
}

/** An error the guest reported through `__guest_error` (the instance is still good). */
class GuestError extends Error {}

/** One instance of a module and the state of the call under way. */
class Instance {
  constructor(module) {
    this.request = null;
    this.response = null;
    this.guestError = null;
    this.hostResponse = null;
    this.hostError = null;
    this.hostCall = null;
    const table = { wapc: this.wapcImports(), wasi_snapshot_preview1: this.wasiImports() };
    // Only what the module imports (`describe` checked that every import is provided).
    const imports = {};
    for (const i of WebAssembly.Module.imports(module)) {
      (imports[i.module] ??= {})[i.name] = table[i.module][i.name];
    }
    this.instance = new WebAssembly.Instance(module, imports);
    const exports = this.instance.exports;
    // As wasmtime-provider: the WASI command entry point when there is one, then waPC's initializer.
    if (typeof exports._start === 'function') exports._start();
    if (typeof exports.wapc_init === 'function') exports.wapc_init();
  }

  bytes() {
    return new Uint8Array(this.instance.exports.memory.buffer);
  }

  view() {
    return new DataView(this.instance.exports.memory.buffer);
  }

  call(operation, payload, hostCall) {
    this.request = { operation: encoder.encode(operation), payload: encoder.encode(payload) };
    this.response = null;
    this.guestError = null;
    this.hostCall = hostCall;
    const ok = this.instance.exports.__guest_call(this.request.operation.length, this.request.payload.length);
    this.request = null;
    this.hostCall = null;
    if (ok !== 1) throw new GuestError(this.guestError ?? `${operation} failed without a message`);
    return decoder.decode(this.response ?? new Uint8Array());
  }

  wapcImports() {
    return {
      __guest_request: (operationPtr, payloadPtr) => {
        const memory = this.bytes();
        memory.set(this.request.operation, operationPtr);
        memory.set(this.request.payload, payloadPtr);
      },
      __guest_response: (ptr, len) => {
        this.response = this.bytes().slice(ptr, ptr + len);
      },
      __guest_error: (ptr, len) => {
        this.guestError = decoder.decode(this.bytes().slice(ptr, ptr + len));
      },
      __host_call: (bindingPtr, bindingLen, namespacePtr, namespaceLen, operationPtr, operationLen, ptr, len) => {
        const memory = this.bytes();
        const text = (p, l) => decoder.decode(memory.slice(p, p + l));
        const binding = text(bindingPtr, bindingLen);
        const namespace = text(namespacePtr, namespaceLen);
        const operation = text(operationPtr, operationLen);
        const payload = text(ptr, len);
        this.hostResponse = null;
        this.hostError = null;
        try {
          if (this.hostCall === null) throw new Error('host call outside a guest call');
          this.hostResponse = encoder.encode(this.hostCall(binding, namespace, operation, payload));
          return 1;
        } catch (e) {
          this.hostError = encoder.encode(e instanceof Error ? e.message : String(e));
          return 0;
        }
      },
      __host_response_len: () => this.hostResponse?.length ?? 0,
      __host_response: (ptr) => {
        if (this.hostResponse !== null) this.bytes().set(this.hostResponse, ptr);
      },
      __host_error_len: () => this.hostError?.length ?? 0,
      __host_error: (ptr) => {
        if (this.hostError !== null) this.bytes().set(this.hostError, ptr);
      },
      __console_log: (ptr, len) => {
        console.info(decoder.decode(this.bytes().slice(ptr, ptr + len)));
      },
    };
  }

  // WASI preview 1 as policy-server configures it: no arguments, no environment, no files; stdout and
  // stderr go to the console.
  wasiImports() {
    return {
      args_sizes_get: (argc, size) => {
        this.view().setUint32(argc, 0, true);
        this.view().setUint32(size, 0, true);
        return ERRNO_SUCCESS;
      },
      args_get: () => ERRNO_SUCCESS,
      environ_sizes_get: (count, size) => {
        this.view().setUint32(count, 0, true);
        this.view().setUint32(size, 0, true);
        return ERRNO_SUCCESS;
      },
      environ_get: () => ERRNO_SUCCESS,
      random_get: (ptr, len) => {
        // getRandomValues fills at most 65,536 bytes at a time.
        const memory = this.bytes();
        for (let at = 0; at < len; at += 65536) {
          crypto.getRandomValues(memory.subarray(ptr + at, ptr + Math.min(len, at + 65536)));
        }
        return ERRNO_SUCCESS;
      },
      clock_time_get: (id, _precision, out) => {
        if (id !== 0 && id !== 1) return ERRNO_INVAL;
        const ns = id === 0 ? BigInt(Date.now()) * 1000000n : BigInt(Math.round(performance.now() * 1e6));
        this.view().setBigUint64(out, ns, true);
        return ERRNO_SUCCESS;
      },
      fd_write: (fd, iovs, iovsLen, written) => {
        if (fd !== 1 && fd !== 2) return ERRNO_BADF;
        const view = this.view();
        const memory = this.bytes();
        let total = 0;
        let text = '';
        for (let i = 0; i < iovsLen; i++) {
          const base = view.getUint32(iovs + i * 8, true);
          const len = view.getUint32(iovs + i * 8 + 4, true);
          text += decoder.decode(memory.slice(base, base + len));
          total += len;
        }
        (fd === 1 ? console.info : console.warn)(`policy: ${text}`);
        view.setUint32(written, total, true);
        return ERRNO_SUCCESS;
      },
      proc_exit: (code) => {
        throw new ProcExit(code);
      },
      sched_yield: () => ERRNO_SUCCESS,
    };
  }
}

const PROVIDED = {
  wapc: ['__guest_request', '__guest_response', '__guest_error', '__host_call', '__host_response_len',
    '__host_response', '__host_error_len', '__host_error', '__console_log'],
  wasi_snapshot_preview1: ['args_sizes_get', 'args_get', 'environ_sizes_get', 'environ_get', 'random_get',
    'clock_time_get', 'fd_write', 'proc_exit', 'sched_yield'],
};

function provides(i) {
  return i.kind === 'function' && (PROVIDED[i.module] ?? []).includes(i.name);
}
