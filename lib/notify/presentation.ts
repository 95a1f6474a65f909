/**
 * How a route shows an event: the severity after the route's override, the mentions due, and the links
 * filled from the configured templates (docs/events.md, "Incidents"). Pure; built from the configuration.
 */
import type { LookoutEventDetail } from "../model/event.js";
import { plainPresentation, type Presentation } from "./types.js";

/** The presentation of an event for the deliveries of one route (by name: a route, `default`, `fallback`). */
export type Presenter = (detail: LookoutEventDetail, route: string) => Presentation;

/** Until the configuration says more: the event as raised. */
export const plainPresenter: Presenter = (detail) => plainPresentation(detail);
