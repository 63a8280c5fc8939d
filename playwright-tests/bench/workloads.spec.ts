import { test } from '@playwright/test';
import { workloadsAtScale, describeWorkloads } from '../tests/load';

// Benchmark (not part of the test command): the workloads page at the Kubernetes envelope, 5,000 nodes and
// 150,000 pods, from navigation to the first page of rows drawn. Run:
// `npx playwright test -c bench.config.ts -g "workloads page"`. WINPLACE_SCALE_PODS changes the pod count.
const NODES = 5000;
const PODS = Number(process.env.WINPLACE_SCALE_PODS ?? 150_000);

test('the workloads page at 5,000 nodes', async ({ page }, testInfo) => {
  console.log(describeWorkloads(await workloadsAtScale(page, testInfo, NODES, PODS), NODES, PODS));
});
