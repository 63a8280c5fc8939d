import { test, expect, Page } from '@playwright/test';
import * as fs from 'fs';
import { parseAllDocuments } from 'yaml';
import { watchConsole, shot } from './helpers';

test('the policy page links policy.wasm and turns settings into a ClusterAdmissionPolicy', async ({ page, context, baseURL }, testInfo) => {
  const problems = watchConsole(page);
  await context.grantPermissions(['clipboard-read', 'clipboard-write'], { origin: baseURL });
  await page.goto('/policy');
  const download = page.getByRole('link', { name: 'Download policy.wasm' });
  await expect(download).toHaveAttribute('href', '/policy.wasm');
  const manifest = page.getByLabel('ClusterAdmissionPolicy manifest', { exact: true });
  await expect(manifest).toContainText('apiVersion: policies.kubewarden.io/v1');
  await expect(manifest).toContainText('kind: ClusterAdmissionPolicy');
  await expect(manifest).toContainText('module: registry://ghcr.io/winplace/policies/winplace:');
  await expect(manifest).toContainText('mutating: false');
  for (const resource of ['pods', 'deployments', 'statefulsets', 'daemonsets', 'jobs', 'cronjobs']) {
    await expect(manifest).toContainText(`- ${resource}`);
  }
  await expect(page.locator('.validation')).toHaveText('Settings are valid.');

  // The mutate box drives both the setting and the policy's `mutating`.
  await page.getByLabel('Mutate').check();
  await expect(manifest).toContainText('mutating: true');
  await expect(manifest).toContainText('mutate: true');
  await page.getByLabel('Exempt namespaces').fill('kube-system, monitoring');
  await expect(manifest).toContainText('exemptNamespaces:\n    - kube-system\n    - monitoring');
  // Build pinning: range by default, exact for platforms that want the image's own build.
  await expect(manifest).toContainText('buildPinning: range');
  await page.getByLabel('Build pinning').selectOption('exact');
  await expect(manifest).toContainText('buildPinning: exact');

  // Settings::validate runs as you type and names the bad setting.
  await page.getByLabel('Supported Windows builds').fill('10.0.20348, 2022');
  await expect(page.locator('.validation')).toContainText('supportedBuilds[1]');
  await expect(page.locator('.validation')).toHaveAttribute('data-valid', 'false');
  await expect(manifest).toHaveCount(0);
  await page.getByLabel('Supported Windows builds').fill('10.0.20348');
  await page.getByLabel('Disabled rules').fill('no-such-rule');
  await expect(page.locator('.validation')).toContainText('disabledRules[0]');
  await page.getByLabel('Disabled rules').fill('deprecated-os-label');
  await expect(page.locator('.validation')).toHaveText('Settings are valid.');
  await expect(manifest).toContainText('- deprecated-os-label');

  await page.getByRole('button', { name: 'Copy the ClusterAdmissionPolicy manifest' }).click();
  expect(await page.evaluate(() => navigator.clipboard.readText())).toBe(await manifest.textContent());
  await shot(page, testInfo, 'policy');
  expect(problems).toEqual([]);
});

test('policy.wasm behind the link is a WebAssembly module', async ({ request }) => {
  const response = await request.get('/policy.wasm');
  expect(response.status()).toBe(200);
  expect([...(await response.body()).subarray(0, 4)]).toEqual([0x00, 0x61, 0x73, 0x6d]);
});

/** Downloads the link named `name` and returns the file's name and text. */
async function download(page: Page, name: string): Promise<[string, string]> {
  const [file] = await Promise.all([page.waitForEvent('download'), page.getByRole('link', { name }).click()]);
  return [file.suggestedFilename(), fs.readFileSync(await file.path(), 'utf8')];
}

/** The kinds of a YAML stream's documents, each checked to be an admissionregistration.k8s.io/v1 object. */
function kinds(text: string): string[] {
  return parseAllDocuments(text).map((d) => {
    expect(d.errors).toEqual([]);
    const object = d.toJS();
    expect(object.apiVersion).toBe('admissionregistration.k8s.io/v1');
    expect(object.metadata.name).toMatch(/^winplace-[a-z0-9-]+$/);
    return object.kind;
  });
}

test('the policy page offers the rules as ValidatingAdmissionPolicies and MutatingAdmissionPolicies (download, copy)', async ({ page, context, baseURL }) => {
  const problems = watchConsole(page);
  await context.grantPermissions(['clipboard-read', 'clipboard-write'], { origin: baseURL });
  await page.goto('/policy');

  // Validating: a policy and its binding per exported rule (13 by default), the binding right after.
  const [vapName, vap] = await download(page, 'Download the ValidatingAdmissionPolicies');
  expect(vapName).toBe('winplace-vap.yaml');
  const vapKinds = kinds(vap);
  expect(vapKinds.length).toBe(26);
  vapKinds.forEach((kind, i) =>
    expect(kind).toBe(i % 2 === 0 ? 'ValidatingAdmissionPolicy' : 'ValidatingAdmissionPolicyBinding'));
  expect(vap).toContain('winplace-windows-pod-without-os-selector');
  expect(vap).toContain('messageExpression');
  expect(await page.getByLabel('ValidatingAdmissionPolicies', { exact: true }).textContent()).toBe(vap);
  await page.getByRole('button', { name: 'Copy the ValidatingAdmissionPolicies' }).click();
  expect(await page.evaluate(() => navigator.clipboard.readText())).toBe(vap);

  // Mutating: the network-free fixes (4 by default).
  const [mapName, map] = await download(page, 'Download the MutatingAdmissionPolicies');
  expect(mapName).toBe('winplace-map.yaml');
  const mapKinds = kinds(map);
  expect(mapKinds.length).toBe(8);
  mapKinds.forEach((kind, i) =>
    expect(kind).toBe(i % 2 === 0 ? 'MutatingAdmissionPolicy' : 'MutatingAdmissionPolicyBinding'));
  await page.getByRole('button', { name: 'Copy the MutatingAdmissionPolicies' }).click();
  expect(await page.evaluate(() => navigator.clipboard.readText())).toBe(map);

  // The settings reach the policies: a disabled rule has none.
  await page.getByLabel('Disabled rules').fill('deprecated-os-label');
  await expect(page.locator('.validation')).toHaveText('Settings are valid.');
  const [, fewer] = await download(page, 'Download the ValidatingAdmissionPolicies');
  expect(kinds(fewer).length).toBe(24);
  expect(fewer).not.toContain('winplace-deprecated-os-label');
  // Exact pinning: the same fixes, the build pinned by the nodeSelector of one build instead of the range
  // in the required node affinity (what `check --fix` writes with buildPinning: exact).
  expect(buildPatch(map)).toContain('nodeAffinity');
  const mapLink = page.getByRole('link', { name: 'Download the MutatingAdmissionPolicies' });
  const rangeHref = await mapLink.getAttribute('href');
  await page.getByLabel('Build pinning').selectOption('exact');
  await expect(mapLink).not.toHaveAttribute('href', rangeHref ?? '');
  const [exactName, exact] = await download(page, 'Download the MutatingAdmissionPolicies');
  expect(exactName).toBe('winplace-map.yaml');
  expect(kinds(exact).length).toBe(8);
  const exactPatch = buildPatch(exact);
  expect(exactPatch).toContain("'/nodeSelector/node.kubernetes.io~1windows-build'");
  expect(exactPatch).toContain("'10.0.' + string(");
  expect(exactPatch).not.toContain('nodeAffinity');
  await page.getByRole('button', { name: 'Copy the MutatingAdmissionPolicies' }).click();
  expect(await page.evaluate(() => navigator.clipboard.readText())).toBe(exact);
  expect(problems).toEqual([]);
});

/** The JSON patch expression of the build-pin fix's MutatingAdmissionPolicy in a MAP stream. */
function buildPatch(text: string): string {
  const policy = parseAllDocuments(text)
    .map((d) => d.toJS())
    .find((o) => o.kind === 'MutatingAdmissionPolicy' && o.metadata.name === 'winplace-windows-pod-without-build-selector');
  expect(policy).toBeDefined();
  return policy.spec.mutations[0].jsonPatch.expression as string;
}
