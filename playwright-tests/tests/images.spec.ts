// Where each image's OS and build came from, in the workload details: the server started with
// --resolve-images against a real registry (Debian's docker-registry, images pushed with skopeo, as
// server/tests/registry.rs does), a registry that never answers, and an image rule of the settings.
import { test, expect } from '@playwright/test';
import { spawn, spawnSync, ChildProcess } from 'child_process';
import { createHash } from 'crypto';
import * as fs from 'fs';
import * as net from 'net';
import * as path from 'path';
import { watchConsole, shot, Server, startServer, freePort, tempFile, writeJson, node, pod, pinnedWindows } from './helpers';

const REGISTRY_BIN = '/usr/bin/docker-registry';
const SKOPEO_BIN = '/usr/bin/skopeo';

/** Writes a blob of an OCI layout; returns its digest. */
function blob(dir: string, bytes: Buffer): string {
  const hex = createHash('sha256').update(bytes).digest('hex');
  fs.writeFileSync(path.join(dir, 'blobs/sha256', hex), bytes);
  return `sha256:${hex}`;
}

/** An OCI layout at `dir` tagging `tag` as a Windows-only index of one Windows Server 2019 image; returns the index's digest. */
function windows2019Layout(dir: string, tag: string) {
  fs.mkdirSync(path.join(dir, 'blobs/sha256'), { recursive: true });
  fs.writeFileSync(path.join(dir, 'oci-layout'), '{"imageLayoutVersion":"1.0.0"}');
  const layer = Buffer.alloc(1024); // an empty tar archive
  const layerDigest = blob(dir, layer);
  const config = Buffer.from(JSON.stringify({
    architecture: 'amd64', os: 'windows', 'os.version': '10.0.17763.6414',
    rootfs: { type: 'layers', diff_ids: [layerDigest] }, config: {},
  }));
  const configDigest = blob(dir, config);
  const manifest = Buffer.from(JSON.stringify({
    schemaVersion: 2, mediaType: 'application/vnd.oci.image.manifest.v1+json',
    config: { mediaType: 'application/vnd.oci.image.config.v1+json', digest: configDigest, size: config.length },
    layers: [{ mediaType: 'application/vnd.oci.image.layer.v1.tar', digest: layerDigest, size: layer.length }],
  }));
  const manifestDigest = blob(dir, manifest);
  const index = Buffer.from(JSON.stringify({
    schemaVersion: 2, mediaType: 'application/vnd.oci.image.index.v1+json',
    manifests: [{ mediaType: 'application/vnd.oci.image.manifest.v1+json', digest: manifestDigest, size: manifest.length,
      platform: { architecture: 'amd64', os: 'windows', 'os.version': '10.0.17763.6414' } }],
  }));
  const indexDigest = blob(dir, index);
  fs.writeFileSync(path.join(dir, 'index.json'), JSON.stringify({ schemaVersion: 2, manifests: [
    { mediaType: 'application/vnd.oci.image.index.v1+json', digest: indexDigest, size: index.length,
      annotations: { 'org.opencontainers.image.ref.name': tag } }] }));
  return indexDigest;
}

/** Waits until something listens on 127.0.0.1:`port`. */
async function listening(port: number, timeoutMs = 20_000) {
  const start = Date.now();
  for (;;) {
    const up = await new Promise<boolean>((resolve) => {
      const s = net.connect(port, '127.0.0.1', () => { s.destroy(); resolve(true); });
      s.on('error', () => resolve(false));
    });
    if (up) return;
    if (Date.now() - start > timeoutMs) throw new Error(`nothing listens on ${port}`);
    await new Promise((r) => setTimeout(r, 100));
  }
}

test.describe('images and where their OS came from', () => {
  let registry: ChildProcess | undefined;
  let hanging: net.Server | undefined;
  const held: net.Socket[] = [];
  let server: Server;
  let digest = '';
  let host = '';
  let hangingHost = '';

  test.beforeAll(async () => {
    for (const bin of [REGISTRY_BIN, SKOPEO_BIN]) {
      expect(fs.existsSync(bin), `${bin} is missing: apt-get install docker-registry skopeo (cargo xtask test installs them)`).toBe(true);
    }
    const dir = fs.mkdtempSync(path.join(path.dirname(tempFile('x')), 'registry-'));
    const port = await freePort();
    host = `127.0.0.1:${port}`;
    fs.writeFileSync(path.join(dir, 'config.yml'),
      `version: 0.1\nlog:\n  level: error\n  accesslog:\n    disabled: true\nstorage:\n  filesystem:\n    rootdirectory: ${dir}/storage\nhttp:\n  addr: ${host}\n`);
    registry = spawn(REGISTRY_BIN, ['serve', path.join(dir, 'config.yml')], { stdio: 'ignore' });
    await listening(port);
    windows2019Layout(path.join(dir, 'layout'), 'ws2019');
    const push = spawnSync(SKOPEO_BIN, ['--insecure-policy', 'copy', '--all', '--dest-tls-verify=false',
      `oci:${path.join(dir, 'layout')}:ws2019`, `docker://${host}/contoso/billing:ws2019`], { encoding: 'utf8' });
    expect(push.status, push.stderr).toBe(0);
    // The digest the registry holds (skopeo may re-serialize the index on the way): what the server must show.
    const head = await fetch(`http://${host}/v2/contoso/billing/manifests/ws2019`, { method: 'HEAD',
      headers: { accept: 'application/vnd.oci.image.index.v1+json, application/vnd.docker.distribution.manifest.list.v2+json' } });
    digest = head.headers.get('docker-content-digest') ?? '';
    expect(digest).toMatch(/^sha256:[0-9a-f]{64}$/);
    // A registry that accepts connections and never answers.
    hanging = net.createServer((socket) => { held.push(socket); });
    await new Promise<void>((resolve) => hanging!.listen(0, '127.0.0.1', resolve));
    const address = hanging.address();
    hangingHost = `127.0.0.1:${typeof address === 'object' && address ? address.port : 0}`;

    const cluster = { apiVersion: 'v1', kind: 'List', metadata: { resourceVersion: '' }, items: [
      node('img-win22-0', 'windows', '2022'), node('img-linux-0', 'linux'),
      pod('shop', 'billing', 'img-win22-0', `${host}/contoso/billing:ws2019`, pinnedWindows),
      pod('shop', 'missing', 'img-win22-0', `${host}/contoso/billing:missing`, pinnedWindows),
      pod('shop', 'hung', 'img-win22-0', `${hangingHost}/contoso/audit:1`, pinnedWindows),
      pod('shop', 'ruled', 'img-win22-0', 'contoso.example/ledger:7', pinnedWindows),
      pod('shop', 'iis', 'img-win22-0', 'mcr.microsoft.com/windows/servercore/iis:windowsservercore-ltsc2022', pinnedWindows),
    ] };
    const snapshot = tempFile('images-cluster.json');
    writeJson(snapshot, cluster);
    const settings = tempFile('images-settings.yaml');
    fs.writeFileSync(settings, 'imageRules:\n- {pattern: "contoso.example/*", os: windows, builds: ["10.0.20348"]}\n');
    server = await startServer(undefined, ['--snapshot', snapshot, '--settings', settings, '--resolve-images',
      '--insecure-registry', host, '--insecure-registry', hangingHost, '--registry-timeout', '2']);
  });

  test.afterAll(async () => {
    await server?.stop();
    registry?.kill();
    held.forEach((s) => s.destroy());
    hanging?.close();
  });

  test('each image says its OS/build and whether it came from its name, its manifest or the settings', async ({ page }, testInfo) => {
    const problems = watchConsole(page);
    await page.goto(`${server.url}/workloads?state=all`);
    const open = async (name: string) => {
      const row = page.locator(`tbody.workload[data-workload="Pod/shop/${name}"]`);
      await expect(row).toHaveCount(1);
      const toggle = row.getByRole('button', { name: new RegExp(`Pod/shop/${name}`) });
      if (await toggle.getAttribute('aria-expanded') !== 'true') await toggle.click();
      return row.locator('li.image');
    };

    // Read from the registry: Windows Server 2019, with the digest the registry answered; the build
    // mismatch with the 2022 nodes follows (the live event re-renders the table once the answer is in).
    await expect(page.locator('tbody.workload[data-workload="Pod/shop/billing"] .sev-error')).toBeVisible({ timeout: 20_000 });
    let image = await open('billing');
    await expect(image).toHaveAttribute('data-from', 'manifest');
    await expect(image.locator('.image-os')).toContainText('Windows Server 2019');
    await expect(image.locator('.provenance')).toHaveText(`from its manifest ${digest.slice(0, 19)}…`);
    await expect(image.locator('.provenance')).toHaveAttribute('title', digest);
    await expect(image.locator('.unresolved')).toHaveCount(0);
    await expect(page.locator('tbody.workload[data-workload="Pod/shop/billing"] .finding[data-rule="windows-build-mismatch"]')).toBeVisible();

    // A tag the registry does not know: judged by its name, and why the look-up failed.
    await expect(page.locator('tbody.workload[data-workload="Pod/shop/missing"] .sev-info')).toBeVisible({ timeout: 20_000 });
    image = await open('missing');
    await expect(image).toHaveAttribute('data-from', 'name');
    await expect(image).toHaveAttribute('data-unresolved', 'true');
    await expect(image.locator('.image-os')).toHaveText('OS unknown');
    await expect(image.locator('.unresolved')).toContainText('unresolved: ');
    await expect(image.locator('.unresolved')).toContainText('not found');
    await expect(page.locator('tbody.workload[data-workload="Pod/shop/missing"] .finding[data-rule="image-manifest-unresolved"]')).toBeVisible();

    // The registry that never answers: a timeout.
    image = await open('hung');
    await expect(image.locator('.unresolved')).toContainText('timeout', { timeout: 20_000 });
    await expect(image).toHaveAttribute('data-from', 'name');

    // An image rule of the settings, never looked up.
    image = await open('ruled');
    await expect(image).toHaveAttribute('data-from', 'settings');
    await expect(image.locator('.provenance')).toHaveText('from an image rule of the settings');
    await expect(image.locator('.image-os')).toContainText('Windows Server 2022');
    await expect(image).toHaveAttribute('data-unresolved', 'false');

    // A Microsoft tag: from its name.
    image = await open('iis');
    await expect(image).toHaveAttribute('data-from', 'name');
    await expect(image.locator('.provenance')).toHaveText('from its name');
    await expect(image.locator('.image-os')).toContainText('Windows Server 2022');
    await shot(page, testInfo, 'workload-images');
    expect(problems).toEqual([]);
  });
});
