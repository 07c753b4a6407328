"""Table gateways: each table is written from one module here; services call its functions
inside their own transactions (portable SQL, `?` parameters, `RETURNING id`)."""
