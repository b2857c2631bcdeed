/**
 * What the layout shares with its pages: the UI language (Accept-Language
 * first, then navigator.language once the browser runs).
 */
import { getContext } from 'svelte';
import type { JobLocale } from 'supabase-jobs/svelte';

/** Reads the current UI locale (call during component init, read the getter later). */
export function useLocale(): () => JobLocale {
	return getContext<() => JobLocale>('locale') ?? (() => 'en');
}
