import { test, expect } from '@playwright/test';
import { watchConsole } from './helpers';

// The Placements view (dashboard/src/pages/placements.rs) of `GET /api/placements`. The demo server runs
// without `--place`, so it answers `enabled: false`; the rows of a placing replica are the answer
// `server/tests/place.rs` checks (`PlacementsResponse` in api/src/placements.rs), served here through the
// page's own fetch.
test('the placements view says when the server does not place, and shows what a placing replica did', async ({ page }) => {
  const problems = watchConsole(page);
  await page.goto('/');
  await page.getByRole('link', { name: 'Placements' }).click();
  await expect(page.getByRole('heading', { level: 1, name: 'Placements' })).toBeVisible();
  await expect(page.locator('[data-placements="off"]')).toContainText('winplace serve --place');

  await page.route('**/api/placements', (route) => route.fulfill({
    contentType: 'application/json',
    body: JSON.stringify({
      enabled: true,
      leading: true,
      placements: [
        {
          pod: 'shop/late', at: '2026-11-26T10:00:05Z', images: ['registry.example/late:1'],
          outcome: 'released', reason: 'deadline', note: 'registry.example/late:1 was not read within --place-deadline',
        },
        {
          pod: 'shop/web', at: '2026-11-26T10:00:01Z', images: ['registry.example/web:1'],
          outcome: 'placed', pins: ['nodeSelector kubernetes.io/os: windows', 'toleration os=windows:NoSchedule'],
          note: 'placed',
        },
      ],
    }),
  }));
  await page.reload();
  await expect(page.locator('[data-leading="true"]')).toContainText('holds the placement Lease');
  const placed = page.locator('tr[data-pod="shop/web"]');
  await expect(placed).toHaveAttribute('data-outcome', 'placed');
  await expect(placed).toContainText('nodeSelector kubernetes.io/os: windows; toleration os=windows:NoSchedule');
  const released = page.locator('tr[data-pod="shop/late"]');
  await expect(released).toHaveAttribute('data-outcome', 'released');
  await expect(released).toContainText('gate released (deadline): registry.example/late:1 was not read');
  // Newest first, as the server keeps them.
  await expect(page.locator('tr[data-pod]').first()).toHaveAttribute('data-pod', 'shop/late');
  expect(problems).toEqual([]);
});
