// "Chrome 156 on Linux" from a User-Agent header, for the sessions list (bowser parses it).
import Bowser from 'bowser';

export function describeBrowser(userAgent: string | undefined): string | null {
  if (!userAgent) return null;
  const { browser, os } = Bowser.parse(userAgent.slice(0, 512));
  const major = browser.version?.split('.')[0];
  const name = browser.name ? `${browser.name}${major ? ` ${major}` : ''}` : userAgent.split(/[\s/]/)[0] || 'Unknown client';
  return os.name ? `${name} on ${os.name}` : name;
}
