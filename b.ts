const n: number = 'x';
