import { Type } from 'typebox';

export const NewDeveloperBody = Type.Object({
  name: Type.String({ minLength: 1, maxLength: 200 }),
  redirect_uris: Type.Optional(Type.Array(Type.String({ maxLength: 2000 }), { maxItems: 50 })),
});

export const NewDeveloperResponse = Type.Object({
  developer_id: Type.String(),
  client_id: Type.String(),
  client_secret: Type.String(),
  user_client_id: Type.String(),
});

export const NewUserBody = Type.Object({
  email: Type.String({ maxLength: 255 }),
  password: Type.String({ maxLength: 1024 }),
  role: Type.Union([Type.Literal('patient'), Type.Literal('provider')]),
  provider_id: Type.Optional(Type.String({ maxLength: 200 })),
});

export const NewUserResponse = Type.Object({
  user_id: Type.String(),
  email: Type.String(),
  role: Type.String(),
  provider_id: Type.Union([Type.String(), Type.Null()]),
});

export const SeedBody = Type.Object({
  providers: Type.Integer({ minimum: 1, maximum: 100000 }),
  seed: Type.Optional(Type.Integer({ minimum: 0, maximum: 2 ** 31 - 1 })),
  developer_id: Type.Optional(Type.String({ maxLength: 200 })),
});

export const SeedResponse = Type.Object({
  practices: Type.Optional(Type.Integer()),
  specialties: Type.Optional(Type.Integer()),
  visit_reasons: Type.Optional(Type.Integer()),
  insurance_carriers: Type.Optional(Type.Integer()),
  insurance_plans: Type.Optional(Type.Integer()),
  facilities: Type.Optional(Type.Integer()),
  providers: Type.Integer(),
  locations: Type.Integer(),
  provider_locations: Type.Integer(),
  added: Type.Integer(),
  removed: Type.Integer(),
  profile_updated: Type.Integer(),
});

export const ImportQuery = Type.Object({
  developer_id: Type.Optional(Type.String({ maxLength: 200 })),
});
