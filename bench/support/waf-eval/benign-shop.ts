// Shop traffic from BestBuyAPIs/open-data-set: category trees browsed by path and filtered by
// facet, category and product-line names searched, stores found by city and zip, and store
// addresses and hours sent as checkout, pickup and store-admin forms, feeds and CSV uploads.
import { Deck, Rng } from './benign-rng.ts';
import { Mirror } from './benign-mirror.ts';
import { type Draft, generate, type Template } from './benign-gen.ts';
import { browserHeaders, cookieHeader, externalReferer, formEncode, multipart, person, pickBrowser, queryEncode, seg, xmlEscape } from './benign-http.ts';
import { slugify } from './benign-text.ts';
import type { EvalRequest } from './types.ts';

const REPO = 'BestBuyAPIs/open-data-set';
const SHOP = 'https://shop.example.com';
const ADMIN = 'https://admin.shop.example.com';

interface Named {
  id: string;
  name: string;
}

interface Category extends Named {
  path: Named[];
  subCategories: Named[];
}

interface Store {
  id: number;
  type: string;
  name: string;
  address: string;
  address2: string;
  city: string;
  state: string;
  zip: string;
  location: { lat: number; lon: number };
  hours: string;
  services: string[];
}

interface Pools {
  categories: Deck<Category>;
  stores: Deck<Store>;
}

function parseJson<T>(text: string | null): T[] {
  if (!text) return [];
  try {
    const v: unknown = JSON.parse(text);
    return Array.isArray(v) ? (v as T[]) : [];
  } catch {
    return [];
  }
}

function load(mirrors: string, rng: Rng): Pools | null {
  const mirror = new Mirror(mirrors, REPO);
  if (!mirror.present) return null;
  const categories = parseJson<Category>(mirror.readOne('categories.json')).filter((c) => c.name && Array.isArray(c.path));
  // address2 is null for some stores; a form sends an empty field for it.
  const stores = parseJson<Store>(mirror.readOne('stores.json'))
    .filter((s) => s.city && s.zip && s.location)
    .map((s) => ({ ...s, address2: s.address2 ?? '', hours: s.hours ?? '', services: Array.isArray(s.services) ? s.services : [] }));
  if (categories.length === 0 || stores.length === 0) return null;
  return { categories: new Deck(rng, categories), stores: new Deck(rng, stores) };
}

const categoryPath = (c: Category): string => `/site/${c.path.map((n) => seg(slugify(n.name))).join('/')}/${seg(c.id)}.c`;

function templates(p: Pools): Template[] {
  const shopCookie = (rng: Rng): string => {
    const s = p.stores.draw();
    return cookieHeader(rng, 'shop', [
      ['locStoreId', String(s.id)],
      ['zip', s.zip],
    ]);
  };

  const categoryBrowse = (rng: Rng): Draft => {
    const browser = pickBrowser(rng);
    const c = p.categories.draw();
    const parent = c.path.length > 1 ? (c.path[c.path.length - 2] as Named) : null;
    const refererPath = parent ? `/site/${seg(slugify(parent.name))}/${parent.id}.c?id=${parent.id}` : undefined;
    const headers = browserHeaders(rng, { browser, mode: 'navigate', origin: SHOP, refererPath, externalReferer: refererPath ? undefined : externalReferer(rng), cookie: shopCookie(rng) });
    return { method: 'GET', target: `${categoryPath(c)}?id=${c.id}`, headers, placement: 'path', encoding: 'plain' };
  };

  // Facet filters name a subcategory: qp=category_facet=<name>~<id>.
  const categoryFilter = (rng: Rng): Draft | null => {
    const c = p.categories.drawFitting((x) => x.subCategories.length > 0);
    if (!c) return null;
    const browser = pickBrowser(rng);
    const sub = rng.pick(c.subCategories);
    const fields: [string, string][] = [
      ['id', c.id],
      ['qp', `category_facet=${sub.name}~${sub.id}`],
    ];
    if (rng.chance(0.5)) fields.push(['sp', rng.pick(['-currentprice skuidsaas', '+currentprice skuidsaas', '-bestsellingsort skuidsaas', '-customerrating skuidsaas'])]);
    if (rng.chance(0.4)) fields.push(['cp', String(rng.range(2, 9))]);
    const headers = browserHeaders(rng, { browser, mode: 'navigate', origin: SHOP, refererPath: `${categoryPath(c)}?id=${c.id}`, cookie: shopCookie(rng) });
    return { method: 'GET', target: `${categoryPath(c)}?${queryEncode(fields)}`, headers, placement: 'query', encoding: 'plain' };
  };

  const productSearch = (rng: Rng): Draft => {
    const browser = pickBrowser(rng);
    const c = p.categories.draw();
    const parent = c.path[c.path.length - 2];
    const st = rng.chance(0.25) && parent ? `${parent.name} ${c.name}` : rng.chance(0.2) && c.subCategories.length ? rng.pick(c.subCategories).name : c.name;
    const target = `/site/searchpage.jsp?${queryEncode([
      ['st', st],
      ['_dyncharset', 'UTF-8'],
      ['_dynSessConf', ''],
      ['id', 'pcat17071'],
      ['type', 'page'],
      ['sc', 'Global'],
      ['cp', '1'],
      ['nrp', ''],
      ['sp', ''],
      ['qp', ''],
      ['list', 'n'],
      ['af', 'true'],
      ['iht', 'y'],
      ['usc', 'All Categories'],
      ['ks', '960'],
      ['keys', 'keys'],
    ])}`;
    const headers = browserHeaders(rng, { browser, mode: 'navigate', origin: SHOP, refererPath: rng.chance(0.7) ? `${categoryPath(c)}?id=${c.id}` : '/', cookie: shopCookie(rng) });
    return { method: 'GET', target, headers, placement: 'query', encoding: 'plain' };
  };

  const storeFinder = (rng: Rng): Draft => {
    const browser = pickBrowser(rng);
    const s = p.stores.draw();
    const target = rng.pick([
      () => `/site/store-locator?${queryEncode([['zip', s.zip], ['radius', rng.pick(['10', '25', '50', '100'])]])}`,
      () => `/site/store-locator?${queryEncode([['searchTerm', `${s.city}, ${s.state}`]])}`,
      () => `/site/store-locator/${seg(slugify(s.state))}/${seg(slugify(s.city))}?${queryEncode([['storeName', s.name]])}`,
      () => `/api/stores?${queryEncode([['lat', String(s.location.lat)], ['lng', String(s.location.lon)], ['services', rng.pick(s.services.length ? s.services : ['Geek Squad Services'])]], 'script')}`,
    ])();
    const headers = browserHeaders(rng, { browser, mode: target.startsWith('/api/') ? 'fetch' : 'navigate', origin: SHOP, refererPath: '/site/store-locator', cookie: shopCookie(rng) });
    return { method: 'GET', target, headers, placement: 'query', encoding: 'plain' };
  };

  const storeSearchJson = (rng: Rng): Draft => {
    const browser = pickBrowser(rng);
    const s = p.stores.draw();
    const body = JSON.stringify({
      location: { lat: s.location.lat, lon: s.location.lon },
      radius: { value: rng.pick([10, 25, 50]), unit: 'mi' },
      query: rng.chance(0.5) ? `${s.city}, ${s.state} ${s.zip}` : s.name,
      services: s.services.slice(0, rng.range(0, 3)),
      openNow: rng.chance(0.3),
    });
    const headers = browserHeaders(rng, { browser, mode: 'fetch', origin: SHOP, refererPath: `/site/store-locator?${queryEncode([['zip', s.zip]])}`, cookie: shopCookie(rng), contentType: 'application/json', hasBody: true });
    return { method: 'POST', target: '/api/stores/search', headers, body, placement: 'json', encoding: 'plain' };
  };

  // A shipping address step; the store's street address stands in for the buyer's.
  const checkoutForm = (rng: Rng): Draft => {
    const browser = pickBrowser(rng);
    const s = p.stores.draw();
    const who = person(rng);
    const body = formEncode([
      ['authenticity_token', rng.alnum(86) + '=='],
      ['checkout[email]', who.email],
      ['checkout[shipping_address][first_name]', who.first],
      ['checkout[shipping_address][last_name]', who.last],
      ['checkout[shipping_address][company]', rng.chance(0.2) ? s.name : ''],
      ['checkout[shipping_address][address1]', s.address],
      ['checkout[shipping_address][address2]', s.address2],
      ['checkout[shipping_address][city]', s.city],
      ['checkout[shipping_address][country]', 'United States'],
      ['checkout[shipping_address][province]', s.state],
      ['checkout[shipping_address][zip]', s.zip],
      ['checkout[shipping_address][phone]', who.phone],
      ['checkout[remember_me]', rng.chance(0.3) ? '1' : '0'],
      ['step', 'contact_information'],
      ['button', ''],
    ]);
    const token = rng.hex(32);
    const headers = browserHeaders(rng, { browser, mode: 'navigate', origin: SHOP, refererPath: `/checkouts/${token}?step=contact_information`, cookie: shopCookie(rng), contentType: 'application/x-www-form-urlencoded', hasBody: true });
    return { method: 'POST', target: `/checkouts/${token}`, headers, body, placement: 'form', encoding: 'plain' };
  };

  const checkoutJson = (rng: Rng): Draft => {
    const browser = pickBrowser(rng);
    const s = p.stores.draw();
    const who = person(rng);
    const items = Array.from({ length: rng.range(1, 4) }, () => {
      const c = p.categories.draw();
      return { sku: rng.digits(7), name: c.name, category: c.path.map((n) => n.name).join(' > '), quantity: rng.range(1, 3), price: rng.range(499, 199999) / 100 };
    });
    const pickup = rng.chance(0.5);
    const body = JSON.stringify({
      email: who.email,
      items,
      fulfillment: pickup ? { type: 'store_pickup', storeId: s.id, storeName: s.name, hours: s.hours } : { type: 'ship', address: { firstName: who.first, lastName: who.last, line1: s.address, line2: s.address2 || null, city: s.city, state: s.state, postalCode: s.zip, country: 'US', phone: who.phone } },
      giftMessage: null,
      promoCodes: [],
    });
    const headers = browserHeaders(rng, { browser, mode: 'fetch', origin: SHOP, refererPath: '/checkout/r/fulfillment', cookie: shopCookie(rng), contentType: 'application/json', hasBody: true, extra: { 'x-client-id': 'checkout-web', 'x-request-id': rng.uuid() } });
    return { method: 'POST', target: '/api/checkout/orders', headers, body, placement: 'json', encoding: 'plain' };
  };

  const storeAdminForm = (rng: Rng): Draft => {
    const browser = pickBrowser(rng);
    const s = p.stores.draw();
    const body = formEncode([
      ['_csrf', rng.alnum(36)],
      ['store[name]', s.name],
      ['store[type]', s.type],
      ['store[address]', s.address],
      ['store[address2]', s.address2],
      ['store[city]', s.city],
      ['store[state]', s.state],
      ['store[zip]', s.zip],
      ['store[lat]', String(s.location.lat)],
      ['store[lon]', String(s.location.lon)],
      ['store[hours]', s.hours],
      ...s.services.map((v) => ['store[services][]', v] as [string, string]),
      ['commit', 'Update Store'],
    ]);
    const headers = browserHeaders(rng, { browser, mode: 'navigate', origin: ADMIN, refererPath: `/stores/${s.id}/edit`, cookie: cookieHeader(rng, 'django'), contentType: 'application/x-www-form-urlencoded', hasBody: true });
    return { method: 'POST', target: `/stores/${s.id}`, headers, body, placement: 'form', encoding: 'plain' };
  };

  // A catalog import: a category with its path and subcategories as XML.
  const catalogXml = (rng: Rng): Draft => {
    const cats = Array.from({ length: rng.range(1, 6) }, () => p.categories.draw());
    const xml = cats
      .map(
        (c) =>
          `  <category id="${xmlEscape(c.id)}">\n    <name>${xmlEscape(c.name)}</name>\n    <path>${c.path.map((n) => `<node id="${xmlEscape(n.id)}">${xmlEscape(n.name)}</node>`).join('')}</path>\n` +
          `    <subCategories>${c.subCategories.map((n) => `<category id="${xmlEscape(n.id)}">${xmlEscape(n.name)}</category>`).join('')}</subCategories>\n  </category>`,
      )
      .join('\n');
    const body = `<?xml version="1.0" encoding="UTF-8"?>\n<catalog version="2" generated="${rng.unixTime()}">\n${xml}\n</catalog>\n`;
    const browser = pickBrowser(rng);
    const headers = browserHeaders(rng, { browser, mode: 'fetch', origin: ADMIN, refererPath: '/catalog/import', cookie: cookieHeader(rng, 'django'), contentType: 'application/xml', hasBody: true });
    return { method: 'POST', target: '/api/catalog/categories/import', headers, body, placement: 'xml', encoding: 'plain' };
  };

  const csvCell = (v: string): string => (/[",\n]/.test(v) ? `"${v.replace(/"/g, '""')}"` : v);

  const storeCsvUpload = (rng: Rng): Draft => {
    const browser = pickBrowser(rng);
    const rows = Array.from({ length: rng.range(3, 40) }, () => {
      const s = p.stores.draw();
      return [String(s.id), s.name, s.address, s.address2, s.city, s.state, s.zip, s.hours, s.services.join('; ')].map(csvCell).join(',');
    });
    const content = ['id,name,address,address2,city,state,zip,hours,services', ...rows].join('\r\n') + '\r\n';
    const { body, contentType } = multipart(rng, browser, [
      { name: '_csrf', value: rng.alnum(36) },
      { name: 'file', filename: `stores-${rng.range(2019, 2025)}-${String(rng.range(1, 12)).padStart(2, '0')}.csv`, type: 'text/csv', content },
      { name: 'notes', value: `Update for ${p.stores.draw().city} region` },
    ]);
    const headers = browserHeaders(rng, { browser, mode: 'navigate', origin: ADMIN, refererPath: '/stores/import', cookie: cookieHeader(rng, 'django'), contentType, hasBody: true });
    return { method: 'POST', target: '/stores/import', headers, body, placement: 'multipart', encoding: 'plain' };
  };

  return [
    { what: 'category-path', weight: 3, make: categoryBrowse },
    { what: 'category-filter', weight: 1.5, make: categoryFilter },
    { what: 'product-search', weight: 2, make: productSearch },
    { what: 'store-finder', weight: 1.5, make: storeFinder },
    { what: 'store-search-json', weight: 1, make: storeSearchJson },
    { what: 'checkout-form', weight: 2, make: checkoutForm },
    { what: 'checkout-json', weight: 1.5, make: checkoutJson },
    { what: 'store-admin-form', weight: 1, make: storeAdminForm },
    { what: 'catalog-xml', weight: 0.4, make: catalogXml },
    { what: 'store-csv-upload', weight: 0.5, make: storeCsvUpload },
  ];
}

export function shopRequests(mirrors: string, count: number): EvalRequest[] {
  const rng = new Rng(`benign:${REPO}`);
  const pools = load(mirrors, rng);
  return pools ? generate(REPO, rng, templates(pools), count) : [];
}
