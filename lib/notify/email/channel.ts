/** An email address list as a `Channel` of the delivery core: follow-ups thread under the first alert's message. */
import type { Channel, ChannelIdentity, EmailTransport, Presentation } from "../types.js";
import { digestLinksOf } from "../types.js";
import { alertMessageId, renderEmail, renderEmailDigest, renderEmailEscalation, type EmailRenderOptions } from "./render.js";

export function emailChannel(who: ChannelIdentity, address: { from: string; to: string[] }, transport: EmailTransport): Channel {
  return {
    ...who,
    async send(detail, incident, presentation) {
      // The email renderer reads the route's presentation and the incident (its first alert) from these.
      const options: EmailRenderOptions & { presentation?: Presentation } = {
        ...address,
        ...(incident ? { incident } : {}),
        ...(incident?.messageId ? { firstMessageId: incident.messageId } : {}),
        ...(presentation ? { presentation } : {}),
      };
      return { messageId: (await transport.send(renderEmail(detail, options))).messageId };
    },
    async sendEscalation(notice, incident, presentation) {
      const parent = incident?.shown ? { firstMessageId: incident.messageId ?? alertMessageId(notice.first.id, address.from) } : {};
      return { messageId: (await transport.send(renderEmailEscalation(notice.first, notice, { ...address, presentation, ...parent }))).messageId };
    },
    async sendDigest(held, window, presentationOf) {
      const message = renderEmailDigest(held, {
        ...address, since: window.from, until: window.to, label: who.label, heldAt: window.heldAt, sentAt: window.at, ...digestLinksOf(presentationOf),
      });
      return { messageId: (await transport.send(message)).messageId };
    },
  };
}
