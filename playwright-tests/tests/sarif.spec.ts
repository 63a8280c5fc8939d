// `winplace check --format sarif` against the SARIF 2.1.0 schema (the OASIS schema as shipped in the
// @microsoft/jest-sarif npm package, validated with ajv as that package does), and the location rule
// SARIF validators enforce (SARIF1004): every URI is a file:// URI or relative to an originalUriBaseIds root.
import { test, expect } from '@playwright/test';
import { spawnSync } from 'child_process';
import * as path from 'path';
import Ajv from 'ajv';
import { bin } from './helpers';

const schema = require('@microsoft/jest-sarif/lib/schemas/sarif-2.1.0-rtm.5.json');
const corpus = path.resolve(__dirname, '../../corpus');

function sarif(cwd: string, ...paths: string[]): any {
  const run = spawnSync(bin, ['check', '--format', 'sarif', ...paths], { cwd, encoding: 'utf8' });
  expect(run.error).toBeUndefined();
  // 0 (clean), 1 (findings) or 2 (unparsable input): the report is printed in every case.
  expect([0, 1, 2]).toContain(run.status);
  return JSON.parse(run.stdout);
}

/** Every artifactLocation of a log. */
function locations(log: any): any[] {
  const out: any[] = [];
  for (const run of log.runs) {
    for (const r of run.results ?? []) for (const l of r.locations ?? []) out.push(l.physicalLocation.artifactLocation);
    for (const i of run.invocations ?? []) {
      for (const n of i.toolExecutionNotifications ?? []) for (const l of n.locations ?? []) out.push(l.physicalLocation.artifactLocation);
    }
  }
  return out;
}

test('SARIF output is valid SARIF 2.1.0 with resolvable locations, for relative and absolute paths', () => {
  const ajv = new Ajv({ allErrors: true, schemaId: 'auto' });
  // The SARIF schema is draft-04, which ajv 6 knows only when given its meta-schema (as jest-sarif does).
  ajv.addMetaSchema(require('ajv/lib/refs/json-schema-draft-04.json'));
  const validate = ajv.compile(schema);
  const relative = sarif(path.join(corpus, 'windows-deployment-unpinned'), 'input.yaml');
  const absolute = sarif(corpus, path.join(corpus, 'windows-deployment-unpinned', 'input.yaml'),
    path.join(corpus, 'yaml-parse-error', 'input.yaml'));
  // A chart rendered by Helm: each result names its template as a related location.
  const helm = sarif(path.join(corpus, 'helm-rendered-chart'), 'input.yaml');
  expect(helm.runs[0].results.length).toBeGreaterThan(0);
  for (const r of helm.runs[0].results) {
    expect(r.relatedLocations[0].physicalLocation.artifactLocation.uri).toMatch(/^winshop\/templates\//);
  }
  for (const log of [relative, absolute, helm]) {
    const valid = validate(log);
    expect(validate.errors ?? [], JSON.stringify(validate.errors, null, 1)).toEqual([]);
    expect(valid).toBe(true);
    const bases = log.runs[0].originalUriBaseIds ?? {};
    for (const base of Object.values<any>(bases)) expect(base.uri).toMatch(/^file:\/\/\/.*\/$/);
    const locs = locations(log);
    expect(locs.length).toBeGreaterThan(0);
    for (const loc of locs) {
      if (loc.uriBaseId !== undefined) {
        expect(Object.keys(bases)).toContain(loc.uriBaseId);
        expect(loc.uri).not.toMatch(/^\//);
      } else {
        expect(loc.uri).toMatch(/^file:\/\/\//);
      }
    }
  }
  expect(locations(relative)[0]).toEqual({ uri: 'input.yaml', uriBaseId: '%SRCROOT%' });
  expect(locations(absolute).every((l: any) => l.uri.startsWith('file:///'))).toBe(true);
  // A parse error is a notification with a location too.
  expect(absolute.runs[0].invocations[0].toolExecutionNotifications.length).toBeGreaterThan(0);
});
