/** Side panel entrypoint: mounts the Svelte app (all UI code lives in `src/ui`). */
import { mount } from 'svelte';
import App from '../../src/ui/App.svelte';
import '../../src/ui/styles.css';

mount(App, { target: document.getElementById('app')! });
