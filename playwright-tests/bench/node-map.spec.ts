import { test } from '@playwright/test';
import { nodeMapAtScale, describeNodeMap } from '../tests/load';

// Benchmark (not part of the test command): the node map at the Kubernetes envelope, 5,000 nodes and
// 150,000 pods, from navigation to the map drawn. Run: `npx playwright test -c bench.config.ts`.
// WINPLACE_SCALE_PODS changes the pod count.
const NODES = 5000;
const PODS = Number(process.env.WINPLACE_SCALE_PODS ?? 150_000);

test('the node map at 5,000 nodes', async ({ page }, testInfo) => {
  console.log(describeNodeMap(await nodeMapAtScale(page, testInfo, NODES, PODS), NODES, PODS));
});
