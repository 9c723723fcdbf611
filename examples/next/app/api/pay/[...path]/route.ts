import { createRouteHandlers } from 'paywidget-server/next';
import { pay } from '../../../../lib/pay';

// POST /api/pay/widget-token, POST /api/pay/webhooks. The handler reads the raw Request itself,
// so webhooks verify without any body-parser configuration.
export const { GET, POST, OPTIONS } = createRouteHandlers(pay);
