/**
 * The page of a resource made by `npm run new:resource` (`/orgs/<id>/<plural>`): its items in a
 * table, newest first, with more on demand; "New" and "Edit" open its form, one input per field
 * suited to its type (a file field's uploads at once: file-input.tsx); delete is confirmed in a
 * dialog. Write controls only for the write role.
 */
import { useEffect } from 'preact/hooks';
import { useApp } from '../ui/app.js';
import { Button, Submit } from '../ui/button.js';
import { Actions, Card, Stack } from '../ui/card.js';
import { ConfirmButton } from '../ui/dialog.js';
import { CheckboxField, Field, Form, SelectField, TextAreaField } from '../ui/field.js';
import { PageHeader } from '../ui/page-header.js';
import { Table } from '../ui/table.js';
import { humanize, STRING_MAX, TEXT_MAX, type FieldSpec, type FieldValue } from '../../shared/resource-fields.js';
import { formIdOf, mayWrite, resourceOrgIdOf, type ResourceConfig, type ResourceItem } from './events.js';
import { FileCell, FileInput } from './file-input.js';
import { inputTextOf } from './form-values.js';
import { BackToOrg, OrgPageGate } from '../orgs/org-page.js';
import { currentLocale, t } from '../i18n/words.js';
import { dateOnly, dateTime } from '../ui/dates.js';

/** A value as a table cell shows it (a file: file-input.tsx). */
function shown(spec: FieldSpec, value: FieldValue): string {
  if (value === null || value === undefined || typeof value === 'object') return '—';
  if (spec.type === 'boolean') return value ? t('Yes') : t('No');
  if (spec.type === 'datetime') return dateTime(value as string);
  if (spec.type === 'text') return String(value).length > 80 ? `${String(value).slice(0, 80)}…` : String(value);
  return String(value);
}

/** A field's or an enum value's name on the pages: its label's words in the reader's language, else humanized. */
const labelOf = (config: ResourceConfig, key: string, name: string) => {
  const id = config.labels?.[key];
  return id ? t(id) : humanize(name);
};

/** The input of one field, holding `value` when editing (the text bodyOf compares with: form-values.ts). */
function Input({ config, form, name, spec, value }: { config: ResourceConfig; form: string; name: string; spec: FieldSpec; value: FieldValue | undefined }) {
  const label = labelOf(config, name, name);
  const plural = config.plural;
  const text = inputTextOf(spec, value) || undefined;
  const required = !spec.optional;
  switch (spec.type) {
    case 'file':
    case 'image':
      return <FileInput plural={plural} form={form} name={name} label={label} spec={spec} value={value} />;
    case 'text':
      return <TextAreaField form={form} name={name} label={label} rows={4} maxLength={TEXT_MAX} defaultValue={text} mono={false} />;
    case 'boolean':
      return <CheckboxField form={form} name={name} label={label} defaultChecked={text === 'on'} />;
    case 'enum':
      return (
        <SelectField
          id={`${form}-${name}`}
          form={form}
          name={name}
          label={label}
          defaultValue={text ?? ''}
          options={[
            ...(spec.optional ? [{ value: '', label: t('None') }] : []),
            ...(spec.values ?? []).map((v) => ({ value: v, label: labelOf(config, `${name}.${v}`, v) })),
          ]}
        />
      );
    case 'integer':
      return <Field form={form} name={name} label={label} type="number" step="1" required={required} defaultValue={text} />;
    case 'decimal':
      return <Field form={form} name={name} label={label} type="text" required={required} defaultValue={text} hint={t('A decimal number, e.g. 1234.50')} />;
    case 'date':
      return <Field form={form} name={name} label={label} type="date" required={required} defaultValue={text} />;
    case 'datetime':
      return <Field form={form} name={name} label={label} type="datetime-local" required={required} defaultValue={text} />;
    default:
      return <Field form={form} name={name} label={label} required={required} maxLength={STRING_MAX} defaultValue={text} />;
  }
}

/** A resource's name inside a sentence: lower case, but in German, whose nouns keep their capital. */
const inSentence = (name: string) => (currentLocale() === 'de' ? name : name.toLocaleLowerCase(currentLocale()));

function ItemForm({ config, item }: { config: ResourceConfig; item: ResourceItem | undefined }) {
  const { dispatch } = useApp();
  const form = formIdOf(config);
  const title = item ? t('Edit {one}', { one: inSentence(t(config.title.one)) }) : t('New {one}', { one: inSentence(t(config.title.one)) });
  return (
    <Card title={title} id={`${form}-card`}>
      <Form id={form} onSubmit={(fields) => dispatch([`${config.plural}/save`, fields])}>
        {Object.entries(config.fields).map(([name, spec]) => (
          <Input key={`${item?.id ?? 'new'}-${name}`} config={config} form={form} name={name} spec={spec} value={item?.[name]} />
        ))}
        <Actions>
          <Submit>{item ? t('Save') : t('Create {one}', { one: inSentence(t(config.title.one)) })}</Submit>
          <Button variant="secondary" onClick={() => dispatch([`${config.plural}/edit`, undefined])}>
            {t('Cancel')}
          </Button>
        </Actions>
      </Form>
    </Card>
  );
}

function Row({ config, item, writable }: { config: ResourceConfig; item: ResourceItem; writable: boolean }) {
  const { state, dispatch } = useApp();
  const fields = Object.entries(config.fields);
  const first = item[fields[0][0]];
  // (a file field first: its file's name)
  const label = typeof first === 'object' && first !== null ? first.name : String(first ?? item.id);
  return (
    <tr data-item={item.id}>
      {fields.map(([name, spec]) => (
        <td key={name} data-field={name}>
          {spec.type === 'file' || spec.type === 'image' ? <FileCell value={item[name]} /> : shown(spec, item[name])}
        </td>
      ))}
      <td>{dateOnly(item['created-at'])}</td>
      {writable && (
        <td class="whitespace-nowrap">
          <Button variant="secondary" class="edit-item" aria-label={t('Edit {label}', { label })} onClick={() => dispatch([`${config.plural}/edit`, item.id])}>
            {t('Edit')}
          </Button>{' '}
          <ConfirmButton
            variant="secondary"
            class="delete-item"
            disabled={state.busy}
            title={t('Delete {label}?', { label })}
            message={t('The {one} is deleted for everyone in the organization.', { one: inSentence(t(config.title.one)) })}
            confirmLabel={t('Delete')}
            onConfirm={() => dispatch([`${config.plural}/delete`, item.id])}
          >
            {t('Delete')}
          </ConfirmButton>
        </td>
      )}
    </tr>
  );
}

export function ResourcePage({ config }: { config: ResourceConfig }) {
  const { state, dispatch } = useApp();
  const id = resourceOrgIdOf(config, location.pathname);
  const page = state.resourcePages?.[config.plural]?.orgId === id ? state.resourcePages?.[config.plural] : undefined;
  useEffect(() => {
    if (id) dispatch([`${config.plural}/open`, id]);
  }, [id]);
  if (!id || page?.status === 'missing') return <OrgPageGate title={t(config.title.many)} missing />;
  if (!page?.org) return <OrgPageGate title={t(config.title.many)} />;
  const org = page.org;
  const writable = mayWrite(org.role as 'owner' | 'admin' | 'member', config.writeRole);
  const editing = page.editing;
  const fields = Object.keys(config.fields).map((name) => labelOf(config, name, name));
  return (
    <>
      <PageHeader
        title={t('{many} of {name}', { many: t(config.title.many), name: org.name })}
        id={`${config.plural}-title`}
        back={<BackToOrg org={org} />}
        actions={
          writable && !editing ? (
            <Button id={`new-${config.name}`} onClick={() => dispatch([`${config.plural}/edit`, null])}>
              {t('New {one}', { one: inSentence(t(config.title.one)) })}
            </Button>
          ) : undefined
        }
      />
      <Stack>
        {editing && <ItemForm config={config} item={editing.id ? page.items?.find((i) => i.id === editing.id) : undefined} />}
        <Card title={t(config.title.many)} id={`${config.plural}-card`}>
          <Table
            id={config.plural}
            caption={t('{many} of {name}', { many: t(config.title.many), name: org.name })}
            headers={[...fields, t('Created'), ...(writable ? [''] : [])]}
            rows={page.items}
            empty={t('No {many} yet.', { many: inSentence(t(config.title.many)) })}
            emptyId={`no-${config.plural}`}
            render={(item) => <Row key={item.id} config={config} item={item} writable={writable} />}
          />
          {page.nextCursor && (
            <Actions>
              <Button id={`more-${config.plural}`} variant="secondary" onClick={() => dispatch([`${config.plural}/load`, page.orgId, page.nextCursor])}>
                {t('Show more')}
              </Button>
            </Actions>
          )}
        </Card>
      </Stack>
    </>
  );
}
