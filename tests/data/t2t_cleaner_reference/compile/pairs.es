El perro ladra.
el perro ladra.
Vine. Vi. ¡Vencí!

Vine y vi.__|__
PARÍS - Llueve.
