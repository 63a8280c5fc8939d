import { test } from '@playwright/test';
import { pasteThousandDocuments, describePaste } from '../tests/load';

// Benchmark (not part of the test command): 1,000 documents (about 2 MB) pasted into the playground,
// evaluated in Chromium by the rules crate; the figure is the app's own measure (data-eval-ms).
// Run: `npx playwright test -c bench.config.ts -g "1000 documents"`.
test('1000 documents (about 2 MB) in the playground', async ({ page }) => {
  console.log(describePaste(await pasteThousandDocuments(page)));
});
