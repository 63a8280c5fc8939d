import { test, expect, Page } from '@playwright/test';
import { execFileSync } from 'child_process';
import { createHash } from 'crypto';
import * as fs from 'fs';
import * as path from 'path';
import { parse } from 'yaml';
import { enterCase as enter, watchConsole, corpusCases, corpusTest, listedFindings as linked } from './helpers';

// The playground's Admission view runs the very policy.wasm the cluster runs, in Chromium, through the
// page's waPC host. For every corpus case: the module's decisions name the same rules as the rules crate
// linked into the page, and its answers are byte-identical to policy.wasm's in wasmtime (policy-host's
// `replay` example) for the same payloads and host answers.

// Both Playwright workers take cases; the corpus cases share a page per worker (`corpusTest`), each from blank.
test.describe.configure({ mode: 'parallel' });

const root = path.resolve(__dirname, '../..');
const cases = corpusCases;
const replayBin = process.env.WINPLACE_REPLAY_BIN ?? path.join(root, 'target/debug/examples/replay');
const modulePath = path.join(root, 'static/policy.wasm');

/** `group/version` (`version` for the core group) of every resource the policy's rules select. */
const selectedGroupVersions: string[] = (parse(fs.readFileSync(path.join(root, 'policy-wasm/metadata.yml'), 'utf8')).rules as { apiGroups: string[]; apiVersions: string[] }[])
  .flatMap((r) => r.apiGroups.flatMap((g) => r.apiVersions.map((v) => (g ? `${g}/${v}` : v))));

type Exchange = { object: string; verdict: string; payload: string; answer: string };

function read(dir: string, f: string): string | undefined {
  const p = path.join(dir, f);
  return fs.existsSync(p) ? fs.readFileSync(p, 'utf8') : undefined;
}

async function exchanges(page: Page): Promise<Exchange[]> {
  return page.locator('.admission-result').evaluateAll((els) => els.map((e) => ({
    object: (e as HTMLElement).dataset.object ?? '',
    verdict: e.querySelector('.verdict')?.getAttribute('data-verdict') ?? '',
    payload: e.querySelector('[data-raw=payload]')?.textContent ?? '',
    answer: e.querySelector('[data-raw=answer]')?.textContent ?? '',
  })));
}

async function hostLists(page: Page): Promise<Record<string, string>> {
  const pairs = await page.locator('.host-list').evaluateAll((els) =>
    els.map((e) => [(e as HTMLElement).dataset.list ?? '', e.textContent ?? '']));
  return Object.fromEntries(pairs);
}

/** The rule ids a module's answer names: `[rule] path: message` in the message and the warnings. */
function ruleIds(answer: string): { errors: string[]; warnings: string[] } {
  const v = JSON.parse(answer);
  const ids = (s: string) => [...s.matchAll(/\[([a-z0-9-]+)\] /g)].map((m) => m[1]);
  return {
    errors: v.accepted ? [] : ids(v.message ?? ''),
    warnings: (v.warnings ?? []).flatMap((w: string) => ids(w)),
  };
}

/** policy.wasm in wasmtime: the same calls with the same host answers. */
function replay(lists: Record<string, string>, payloads: string[]): { ok: boolean; answer?: string; error?: string }[] {
  const input = JSON.stringify({ module: modulePath, lists, calls: payloads.map((payload) => ({ operation: 'validate', payload })) });
  return JSON.parse(execFileSync(replayBin, { input, encoding: 'utf8', maxBuffer: 64 << 20 }));
}

async function evalSeq(page: Page): Promise<number> {
  return Number(await page.locator('.playground').getAttribute('data-eval-seq'));
}

/** Waits until the playground has evaluated after `before` and no further evaluation follows. */
async function settled(page: Page, before: number) {
  let last = -1;
  await expect.poll(async () => {
    const now = await evalSeq(page);
    const quiet = now > before && now === last;
    last = now;
    return quiet;
  }, { timeout: 10_000, intervals: [400] }).toBe(true);
}

async function openAdmission(page: Page) {
  await page.locator('#tab-admission').click();
  await expect(page.locator('.module-identity[data-sha256]')).toBeVisible({ timeout: 20_000 });
}

test('the module the server serves is the built policy.wasm, annotated as kwctl does', async ({ page }) => {
  const problems = watchConsole(page);
  await page.goto('/playground');
  await openAdmission(page);
  const identity = page.locator('.module-identity');
  const bytes = fs.readFileSync(modulePath);
  await expect(identity).toHaveAttribute('data-sha256', createHash('sha256').update(bytes).digest('hex'));
  await expect(identity).toHaveAttribute('data-size', String(bytes.length));
  const metadata = parse(fs.readFileSync(path.join(root, 'policy-wasm/metadata.yml'), 'utf8'));
  await expect(identity).toHaveAttribute('data-version', metadata.annotations['io.kubewarden.policy.version']);
  await expect(identity.locator('.protocol')).toHaveText('v1');
  expect(problems).toEqual([]);
});

for (const [name, dir] of cases) {
  corpusTest(`corpus ${name}: policy.wasm in the browser agrees with the linked rules and with wasmtime`, async ({ playground: page, problems }) => {
    // The first case of a test run waits for `replay`'s wasmtime to compile the 1.2 MB module (15-20 s in a
    // test build; later cases load it from wasmtime's cache), and a busy machine doubles that: three times
    // the usual timeout.
    test.slow();
    const input = read(dir, 'input.yaml') ?? '';
    const expectation = parse(read(dir, 'expect.yaml') ?? '{}') ?? {};
    // The API server sends objects one at a time: a RuntimeClass the case applies beside its pods is known
    // to the policy only as cluster context (it exists once applied), so it is granted as such.
    const runtimeClasses = input.split(/^---$/m).filter((d) => /^kind: RuntimeClass$/m.test(d)).join('---\n');
    const cluster = read(dir, 'cluster.yaml') ?? (runtimeClasses ? runtimeClasses : undefined);
    const seq = await evalSeq(page);
    // With a cluster, the policy asks its host for it only when its settings say it is context-aware.
    const settings = cluster === undefined ? read(dir, 'settings.yaml') : `${read(dir, 'settings.yaml') ?? ''}\ncontextAware: true\n`;
    await enter(page, { input, cluster, settings });
    // The linked rules' findings, once the evaluation has settled on the case's text.
    // Which, not how many: a first evaluation (before the cluster is applied) may have as many findings
    // as the settled one, and other rules.
    const key = (f: { rule?: string; object?: string }) => `${f.rule} ${f.object}`;
    const wanted = ((expectation.findings ?? []) as { rule?: string; object?: string; severity?: string }[])
      .filter((f) => f.severity !== 'info').map(key).sort();
    if (cluster === read(dir, 'cluster.yaml')) {
      await expect.poll(async () => (await linked(page)).filter((f) => f.severity !== 'info').map(key).sort(), { timeout: 10_000 }).toEqual(wanted);
    } else {
      await settled(page, seq);
    }
    const findings = (await linked(page)).filter((f) => f.source === 'input');
    await openAdmission(page);
    await expect(page.locator('.settings-check')).toHaveAttribute('data-valid', 'true');
    const sent = await exchanges(page);
    // Every object with findings reaches the module, except those in an API version the API server no
    // longer serves: it refuses them before any admission webhook is called, and the policy's rules name
    // no such version (the view lists them as not sent). `not-checked` is about a file, which admission
    // never sees.
    const removedRules = ['workload-api-version-removed', 'runtimeclass-deprecated-api'];
    const removed = new Set(findings.filter((f) => removedRules.includes(f.rule)).map((f) => f.object));
    const objects = new Set(findings.filter((f) => f.rule !== 'not-checked').map((f) => f.object).filter((o) => !removed.has(o)));
    // Nor do objects of a group and version no rule of the policy's metadata.yml selects (an OpenShift
    // MachineSet): the API server never calls the policy for them, and the view lists them as not sent.
    const unselected = await page.locator('.not-sent-object').evaluateAll((els) =>
      els.map((e) => [(e as HTMLElement).dataset.object ?? '', (e as HTMLElement).dataset.gvk ?? '']));
    for (const o of objects) {
      if (sent.some((x) => x.object === o)) continue;
      const gvk = unselected.find(([object]) => object === o)?.[1];
      expect(gvk, `${o} was not sent to the module`).toBeDefined();
      expect(selectedGroupVersions, `${o} (${gvk}) is selected by the policy's rules but was not sent`).not.toContain(gvk!.split(' ')[0]);
    }
    for (const o of removed) {
      expect(sent.map((x) => x.object), `${o} is in a removed API version`).not.toContain(o);
      await expect(page.locator(`.not-sent-object[data-object="${o}"]`)).toHaveCount(1);
    }

    for (const x of sent) {
      expect(x.verdict, `${x.object}: ${x.answer}`).not.toBe('error');
      // Node rules warn at admission and never deny (a kubelet must be able to register): the linked
      // rules' errors about a Node are the module's warnings.
      const mine = findings.filter((f) => f.object === x.object)
        .map((f) => (x.object.startsWith('Node/') && f.severity === 'error' ? { ...f, severity: 'warning' } : f));
      const ids = ruleIds(x.answer);
      const sorted = (a: string[]) => [...a].sort();
      if (x.verdict !== 'mutated') {
        expect(sorted(ids.errors), `${x.object}: errors`).toEqual(sorted(mine.filter((f) => f.severity === 'error').map((f) => f.rule)));
        expect(x.verdict, x.object).toBe(mine.some((f) => f.severity === 'error') ? 'denied' : 'allowed');
      }
      expect(sorted(ids.warnings.filter((w) => !mine.some((f) => f.severity === 'error' && f.rule === w))), `${x.object}: warnings`)
        .toEqual(sorted(mine.filter((f) => f.severity === 'warning').map((f) => f.rule)));
    }

    // Byte for byte, the wasmtime host answers the same payloads the same way.
    const wasmtime = replay(await hostLists(page), sent.map((x) => x.payload));
    await expect(page.locator('.image-resolution')).toContainText('not asked');
    expect(wasmtime.map((w) => w.answer ?? w.error)).toEqual(sent.map((x) => x.answer));
    expect(problems).toEqual([]);
  });
}

test('objects whose group/version/kind the policy\'s rules do not match are not sent, and the view says so', async ({ page }) => {
  const problems = watchConsole(page);
  const asked: string[] = [];
  page.on('request', (r) => { if (r.url().includes('/api/images/resolve')) asked.push(r.url()); });
  await page.goto('/playground');
  const deployment = (apiVersion: string, name: string) => `apiVersion: ${apiVersion}\nkind: Deployment\nmetadata:\n  name: ${name}\nspec:\n  selector:\n    matchLabels: {app: ${name}}\n  template:\n    metadata:\n      labels: {app: ${name}}\n    spec:\n      containers:\n      - name: app\n        image: registry.example.com/${name}:1\n`;
  await page.locator('#manifest').fill(`${deployment('apps/v1', 'current')}---\n${deployment('apps/v1beta1', 'legacy')}---\napiVersion: v1\nkind: ConfigMap\nmetadata:\n  name: settings\n`);
  await openAdmission(page);
  // The server's module names apps/v1 only (policy-wasm/metadata.yml): the v1beta1 Deployment never reaches it.
  await expect(page.locator('.admission-result')).toHaveCount(1);
  await expect(page.locator('.admission-result')).toHaveAttribute('data-object', 'Deployment/default/current');
  const notSent = page.locator('.not-sent');
  await expect(notSent).toContainText('would never call it');
  await expect(notSent.locator('.not-sent-object[data-object="Deployment/default/legacy"]')).toHaveAttribute('data-gvk', 'apps/v1beta1 Deployment');
  await expect(notSent.locator('.not-sent-object[data-object="ConfigMap/default/settings"]')).toHaveAttribute('data-gvk', 'v1 ConfigMap');
  await expect(notSent.locator('.not-sent-object[data-object="Deployment/default/current"]')).toHaveCount(0);
  // Images are not even read for the server until the user asks: nothing was requested.
  await expect(page.locator('.image-resolution')).toContainText('not asked');
  expect(asked).toEqual([]);
  expect(problems).toEqual([]);
});

test('a dropped-in policy.wasm shows its own identity and answers; a file that is no module is refused', async ({ page }, testInfo) => {
  const problems = watchConsole(page);
  await page.goto('/playground');
  await page.locator('#manifest').fill('apiVersion: v1\nkind: Pod\nmetadata:\n  name: iis\nspec:\n  containers:\n  - name: iis\n    image: mcr.microsoft.com/windows/servercore/iis:windowsservercore-ltsc2022\n');
  await openAdmission(page);
  await expect(page.locator('.admission-result .verdict')).toHaveAttribute('data-verdict', 'denied');

  // The same module re-annotated with another version: kwctl's newest metadata section is the one read.
  const metadata = JSON.stringify({ protocolVersion: 'v1', mutating: true, rules: [{ apiGroups: [''], apiVersions: ['v1'], resources: ['pods'], operations: ['CREATE'] }], annotations: { 'io.kubewarden.policy.title': 'winplace', 'io.kubewarden.policy.version': '9.9.9' } });
  const bytes = Buffer.concat([fs.readFileSync(modulePath), customSection('io.kubewarden.metadata', Buffer.from(metadata))]);
  const other = testInfo.outputPath('other-policy.wasm');
  fs.writeFileSync(other, bytes);
  await page.locator('#policy-file').setInputFiles(other);
  const identity = page.locator('.module-identity');
  await expect(identity).toHaveAttribute('data-sha256', createHash('sha256').update(bytes).digest('hex'));
  await expect(identity).toHaveAttribute('data-version', '9.9.9');
  await expect(identity.locator('dd').first()).toHaveText('other-policy.wasm');
  await expect(page.locator('.admission-result .verdict')).toHaveAttribute('data-verdict', 'denied');

  const junk = testInfo.outputPath('junk.wasm');
  fs.writeFileSync(junk, 'not wasm');
  await page.locator('#policy-file').setInputFiles(junk);
  await expect(page.locator('.module-identity.error')).toContainText('junk.wasm: not a WebAssembly module');
  await page.locator('.module-server').click();
  await expect(identity).toHaveAttribute('data-version', /\d+\.\d+\.\d+/);
  // Asked for the images' manifests, a server without --resolve-images says so (its 404 is the only error).
  await page.locator('#admission-resolve').check();
  await expect(page.locator('.image-resolution')).toContainText('does not resolve images');
  expect(problems.filter((p) => !p.includes('404'))).toEqual([]);
});

test('offline after load: settings are checked by the module, mutations show their patch or are refused', async ({ page, context }) => {
  const problems = watchConsole(page);
  await page.goto('/playground');
  await openAdmission(page);
  await context.setOffline(true);
  await page.locator('#settings').fill('mutate: 3\n');
  await expect(page.locator('.settings-check')).toHaveAttribute('data-valid', 'false');
  await expect(page.locator('.settings-check')).toContainText('mutate');
  await page.locator('#settings').fill('mutate: true\n');
  await page.locator('#manifest').fill('apiVersion: apps/v1\nkind: Deployment\nmetadata:\n  name: web\nspec:\n  selector:\n    matchLabels: {app: web}\n  template:\n    metadata:\n      labels: {app: web}\n    spec:\n      containers:\n      - name: iis\n        image: mcr.microsoft.com/windows/servercore/iis:windowsservercore-ltsc2022\n');
  const result = page.locator('.admission-result');
  await expect(result.locator('.verdict')).toHaveAttribute('data-verdict', 'mutated');
  await expect(result.locator('.patch')).toContainText('nodeSelector');
  await expect(result.locator('.patched')).toContainText('kubernetes.io/os: windows');
  // A validating ClusterAdmissionPolicy (mutating: false): policy-server refuses the mutation.
  await page.locator('#admission-mutating').uncheck();
  await expect(result.locator('.verdict')).toHaveAttribute('data-verdict', 'denied');
  await expect(result.locator('.admission-message')).toContainText('currently configured to not allow mutations');
  await context.setOffline(false);
  expect(problems).toEqual([]);
});

/** A WebAssembly custom section: id 0, size, name, data. */
function customSection(name: string, data: Buffer): Buffer {
  const leb = (n: number) => { const out: number[] = []; do { let b = n & 0x7f; n >>>= 7; if (n) b |= 0x80; out.push(b); } while (n); return Buffer.from(out); };
  const body = Buffer.concat([leb(Buffer.byteLength(name)), Buffer.from(name), data]);
  return Buffer.concat([Buffer.from([0]), leb(body.length), body]);
}
