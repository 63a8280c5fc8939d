import { test } from '@playwright/test';
import { nodeMapAtScale, describeNodeMap } from './load';

// 5,000 nodes (the Kubernetes envelope's node count) with fewer pods than the envelope, so the test stays
// quick; bench/node-map.spec.ts measures the full 150,000 pods. Asserts behaviour, never a duration.
const NODES = 5000;
const PODS = Number(process.env.WINPLACE_SCALE_PODS ?? 15_000);

test('the node map draws 5,000 nodes and stays usable', async ({ page }, testInfo) => {
  test.setTimeout(300_000);
  console.log(describeNodeMap(await nodeMapAtScale(page, testInfo, NODES, PODS), NODES, PODS));
});
